/**
 * The training step of the browser test (tests/e2e/test_dag_e2e.py) as placeviz names it: a
 * 4-layer MLP (`pv.layers.dense` in name scope `mlp`, layers 0-1 on GPU:0, 2-3 on GPU:1), its
 * loss, gradients, Adam and initializers; edges as the graph wires them.
 */
import type { PlacementDocument } from '../types';
import { graphBuilder } from './fixtures';

export function trainingStepDocument(): PlacementDocument {
  const { doc, add, wire } = graphBuilder();
  /** A variable with its initializer, Assign and read, as `pv.get_variable` makes it. */
  const variable = (name: string, gpu: number, init: string[]) => {
    init.forEach((part) => add(`${name}/Initializer/${part}`, 'Const', gpu));
    add(name, 'VariableV2', gpu);
    add(`${name}/Assign`, 'Assign', gpu);
    add(`${name}/read`, 'Identity', gpu);
    wire(`${name}/Initializer/${init[init.length - 1]}`, `${name}/Assign`);
    wire(name, `${name}/Assign`);
    wire(name, `${name}/read`);
  };
  add('x', 'Placeholder', 1);
  add('y', 'Placeholder', 2);
  let input = 'x';
  for (let i = 0; i < 4; i++) {
    const gpu = i < 2 ? 1 : 2;
    const uniform = ['shape', 'min', 'max', 'RandomUniform', 'sub', 'mul', 'random_uniform'];
    variable(
      `dense_${i}/kernel`,
      gpu,
      uniform.map((p) => `random_uniform/${p}`),
    );
    variable(`dense_${i}/bias`, gpu, ['zeros']);
    const layer = `mlp/dense_${i}`;
    add(`${layer}/MatMul`, 'MatMul', gpu);
    add(`${layer}/BiasAdd`, 'BiasAdd', gpu);
    wire(input, `${layer}/MatMul`);
    wire(`dense_${i}/kernel/read`, `${layer}/MatMul`);
    wire(`${layer}/MatMul`, `${layer}/BiasAdd`);
    wire(`dense_${i}/bias/read`, `${layer}/BiasAdd`);
    input = `${layer}/BiasAdd`;
    if (i < 3) {
      add(`${layer}/Relu`, 'Relu', gpu);
      wire(input, `${layer}/Relu`);
      input = `${layer}/Relu`;
    }
  }
  for (const [name, type] of [
    ['sub', 'Sub'],
    ['Square', 'Square'],
    ['Const', 'Const'],
    ['loss', 'Mean'],
  ]) {
    add(name, type, 2);
  }
  wire(input, 'sub');
  wire('y', 'sub');
  wire('sub', 'Square');
  wire('Square', 'loss');
  wire('Const', 'loss');
  add('gradients/Shape', 'Shape', 2);
  add('gradients/grad_ys_0', 'Fill', 2);
  add('gradients/loss_grad/truediv', 'RealDiv', 2);
  add('gradients/Square_grad/Mul_1', 'Mul', 2);
  add('gradients/sub_grad/Reshape', 'Reshape', 2);
  wire('loss', 'gradients/loss_grad/truediv');
  wire('gradients/grad_ys_0', 'gradients/loss_grad/truediv');
  wire('gradients/loss_grad/truediv', 'gradients/Square_grad/Mul_1');
  wire('sub', 'gradients/Square_grad/Mul_1');
  wire('gradients/Square_grad/Mul_1', 'gradients/sub_grad/Reshape');
  let grad = 'gradients/sub_grad/Reshape';
  add('beta1_power/initial_value', 'Const', 1);
  add('beta1_power', 'VariableV2', 1);
  add('beta1_power/read', 'Identity', 1);
  add('Adam/learning_rate', 'Const', 1);
  for (let i = 3; i >= 0; i--) {
    const gpu = i < 2 ? 1 : 2;
    const g = `gradients/mlp/dense_${i}`;
    if (i < 3) {
      add(`${g}/Relu_grad/ReluGrad`, 'ReluGrad', gpu);
      wire(grad, `${g}/Relu_grad/ReluGrad`);
      wire(`mlp/dense_${i}/Relu`, `${g}/Relu_grad/ReluGrad`);
      grad = `${g}/Relu_grad/ReluGrad`;
    }
    add(`${g}/BiasAdd_grad/Sum`, 'Sum', gpu);
    add(`${g}/MatMul_grad/MatMul`, 'MatMul', gpu);
    add(`${g}/MatMul_grad/MatMul_1`, 'MatMul', gpu);
    wire(grad, `${g}/BiasAdd_grad/Sum`);
    wire(grad, `${g}/MatMul_grad/MatMul`);
    wire(grad, `${g}/MatMul_grad/MatMul_1`);
    wire(`dense_${i}/kernel/read`, `${g}/MatMul_grad/MatMul`);
    grad = `${g}/MatMul_grad/MatMul`;
    for (const [part, from] of [
      ['kernel', `${g}/MatMul_grad/MatMul_1`],
      ['bias', `${g}/BiasAdd_grad/Sum`],
    ]) {
      const v = `dense_${i}/${part}`;
      for (const slot of ['Adam', 'Adam_1']) {
        variable(`${v}/${slot}`, gpu, ['zeros']);
      }
      const apply = `Adam/update_${v}/ApplyAdam`;
      add(apply, 'ApplyAdam', gpu);
      for (const input of [v, `${v}/Adam`, `${v}/Adam_1`, 'beta1_power/read', from]) {
        wire(input, apply);
      }
      wire('Adam/learning_rate', apply);
    }
  }
  add('Adam', 'NoOp', 1);
  add('init/NoOp', 'NoOp', 1);
  add('init/NoOp_1', 'NoOp', 2);
  add('init', 'NoOp', 1);
  for (const n of doc.nodes) {
    if (n.type === 'ApplyAdam') {
      wire(n.name, 'Adam');
    }
    if (n.type === 'Assign') {
      wire(n.name, n.device === 1 ? 'init/NoOp' : 'init/NoOp_1');
    }
  }
  wire('init/NoOp', 'init');
  wire('init/NoOp_1', 'init');
  return doc;
}
