/**
 * A model zoo's graph in small (notebook 08's comparisons): `images` fanned out to five branch
 * scopes side by side (each a folded group, none alike), summed by `AddN` into the loss; with
 * `training`, the initializers, gradients and GradientDescent's updates too, which the view sets
 * aside. Its top level is wide: on half a notebook page it fits only below READABLE_SCALE.
 */
import type { PlacementDocument } from '../types';
import { graphBuilder } from './fixtures';

/** Scopes no two of which read as a series (`tower_0`, `tower_1` would fold into one box). */
const BRANCHES = ['stem', 'inception', 'residual', 'attention', 'pooling'];

export function towersDocument(training = true): PlacementDocument {
  const { doc, add, wire } = graphBuilder();
  add('images', 'Placeholder', 0);
  add('AddN', 'AddN', 1);
  add('SparseSoftmaxCrossEntropyWithLogits', 'SparseSoftmaxCrossEntropyWithLogits', 1);
  add('loss', 'Mean', 1);
  BRANCHES.forEach((scope, t) => {
    const gpu = 1 + (t % 2);
    add(`${scope}/conv1/Conv2D`, 'Conv2D', gpu);
    add(`${scope}/conv1/Relu`, 'Relu', gpu);
    add(`${scope}/logits/MatMul`, 'MatMul', gpu);
    wire('images', `${scope}/conv1/Conv2D`);
    wire(`${scope}/conv1/Conv2D`, `${scope}/conv1/Relu`);
    wire(`${scope}/conv1/Relu`, `${scope}/logits/MatMul`);
    wire(`${scope}/logits/MatMul`, 'AddN');
    if (training) {
      add(`${scope}/conv1/kernel`, 'VariableV2', gpu);
      add(`${scope}/conv1/kernel/Initializer/zeros`, 'Const', gpu);
      add(`${scope}/conv1/kernel/Assign`, 'Assign', gpu);
      wire(`${scope}/conv1/kernel/Initializer/zeros`, `${scope}/conv1/kernel/Assign`);
      wire(`${scope}/conv1/kernel`, `${scope}/conv1/Conv2D`);
      add(`gradients/${scope}/conv1/Conv2D_grad/Conv2DBackpropFilter`, 'Conv2DBackpropFilter', gpu);
      wire('loss', `gradients/${scope}/conv1/Conv2D_grad/Conv2DBackpropFilter`);
      add(`GradientDescent/update_${scope}/conv1/kernel`, 'ApplyGradientDescent', gpu);
      wire(
        `gradients/${scope}/conv1/Conv2D_grad/Conv2DBackpropFilter`,
        `GradientDescent/update_${scope}/conv1/kernel`,
      );
    }
  });
  wire('AddN', 'SparseSoftmaxCrossEntropyWithLogits');
  wire('SparseSoftmaxCrossEntropyWithLogits', 'loss');
  if (training) {
    add('init', 'NoOp', 0);
    for (const scope of BRANCHES) {
      wire(`${scope}/conv1/kernel/Assign`, 'init');
    }
  }
  return doc;
}
