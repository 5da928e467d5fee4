#!/usr/bin/env node
/**
 * Build the federated JupyterLab extension into ../placeviz/labextension (package.json
 * "jupyterlab.outputDir") without Python or the network.
 *
 * This is what `jupyter labextension build .` does through the jupyter_builder Python package
 * (federated_extensions.build_labextension): find @jupyter/builder's lib/build-labextension.js
 * and the JupyterLab core metadata (@jupyterlab/core-meta's core.package.json, which
 * @jupyter/builder depends on), then run
 *   node <builder> --core-package-file <core.package.json> <extension path> [--development]
 * in the extension's directory. Production unless --development is passed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const extPath = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(extPath, 'package.json'));

function resolveFile(specifier, description) {
  try {
    return require.resolve(specifier);
  } catch {
    console.error(`build-labextension: cannot find ${description} (${specifier}); run npm install`);
    process.exit(1);
  }
}

const builderRoot = dirname(resolveFile('@jupyter/builder/package.json', '@jupyter/builder'));
const builder = join(builderRoot, 'lib', 'build-labextension.js');
const corePackageFile = resolveFile(
  '@jupyterlab/core-meta/core.package.json',
  'the JupyterLab core metadata',
);
const pkg = JSON.parse(readFileSync(join(extPath, 'package.json'), 'utf8'));
const entry = join(extPath, pkg.main);
if (!existsSync(entry)) {
  console.error(`build-labextension: ${pkg.main} is missing; run "npm run build:lib" first`);
  process.exit(1);
}

const args = [builder, '--core-package-file', corePackageFile, extPath];
for (const flag of ['--development', '--source-map']) {
  if (process.argv.includes(flag)) {
    args.push(flag);
  }
}
const result = spawnSync(process.execPath, args, { cwd: extPath, stdio: 'inherit' });
if (result.status !== 0) {
  process.exit(result.status ?? 1);
}

// Check what JupyterLab will read: the built package.json's _build entries and their files.
const outputDir = resolve(extPath, pkg.jupyterlab.outputDir);
const built = JSON.parse(readFileSync(join(outputDir, 'package.json'), 'utf8'));
const build = built.jupyterlab?._build ?? {};
const missing = ['load', 'extension', 'mimeExtension', 'style'].filter((key) => !build[key]);
if (missing.length > 0) {
  console.error(`build-labextension: jupyterlab._build lacks ${missing.join(', ')}`);
  process.exit(1);
}
if (!existsSync(join(outputDir, build.load))) {
  console.error(`build-labextension: ${build.load} was not written`);
  process.exit(1);
}
console.log(`build-labextension: ${outputDir} (load: ${build.load})`);
