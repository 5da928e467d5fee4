// Merged into @jupyter/builder's rspack config (package.json "jupyterlab.webpackConfig").
// plotly.js is one lazily loaded ~1.1 MiB chunk by design, so the asset size hint is noise.
module.exports = {
  performance: { hints: false },
};
