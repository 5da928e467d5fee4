import { describe, expect, it } from 'vitest';
import { hierarchyPaths } from './auxiliary';

/** Names and types of a Dense layer trained with Adam, as placeviz (and TF1) makes them. */
const MLP: [string, string][] = [
  ['x', 'Placeholder'],
  ['layer1/kernel/Initializer/random_uniform', 'RandomUniform'],
  ['layer1/kernel', 'VariableV2'],
  ['layer1/kernel/Assign', 'Assign'],
  ['layer1/kernel/read', 'Identity'],
  ['layer1/MatMul', 'MatMul'],
  ['loss', 'Mean'],
  ['gradients/Fill', 'Fill'],
  ['gradients/layer1/MatMul_grad/MatMul', 'MatMul'],
  ['gradients_1/Fill', 'Fill'],
  ['beta1_power/initial_value', 'Const'],
  ['beta1_power', 'VariableV2'],
  ['beta1_power/read', 'Identity'],
  ['layer1/kernel/Adam/Initializer/zeros', 'Const'],
  ['layer1/kernel/Adam', 'VariableV2'],
  ['layer1/kernel/Adam_1', 'VariableV2'],
  ['layer1/kernel/Adam_1/read', 'Identity'],
  ['Adam/learning_rate', 'Const'],
  ['Adam/update_layer1/kernel/ApplyAdam', 'ApplyAdam'],
  ['Adam/update_beta1', 'Assign'],
  ['Adam', 'NoOp'],
  ['init/NoOp_1', 'NoOp'],
  ['init', 'NoOp'],
  ['save/SaveV2', 'SaveV2'],
  ['Assign', 'Assign'],
];

describe('hierarchyPaths', () => {
  it('sets initializers, gradients, the optimizer and save aside, keeping forward ops', () => {
    const paths = hierarchyPaths(MLP.map(([name, type]) => ({ name, type })));
    expect(Object.fromEntries(MLP.map(([name], i) => [name, paths[i]]))).toEqual({
      x: 'x',
      'layer1/kernel/Initializer/random_uniform': '[init]/layer1/kernel/Initializer/random_uniform',
      'layer1/kernel': 'layer1/kernel',
      'layer1/kernel/Assign': '[init]/layer1/kernel/Assign',
      'layer1/kernel/read': 'layer1/kernel/read',
      'layer1/MatMul': 'layer1/MatMul',
      loss: 'loss',
      'gradients/Fill': '[gradients]/Fill',
      'gradients/layer1/MatMul_grad/MatMul': '[gradients]/layer1/MatMul_grad/MatMul',
      'gradients_1/Fill': '[gradients]/gradients_1/Fill',
      'beta1_power/initial_value': '[init]/beta1_power/initial_value',
      beta1_power: '[Adam]/beta1_power',
      'beta1_power/read': '[Adam]/beta1_power/read',
      'layer1/kernel/Adam/Initializer/zeros': '[init]/layer1/kernel/Adam/Initializer/zeros',
      'layer1/kernel/Adam': '[Adam]/layer1/kernel/Adam',
      'layer1/kernel/Adam_1': '[Adam]/layer1/kernel/Adam_1',
      'layer1/kernel/Adam_1/read': '[Adam]/layer1/kernel/Adam_1/read',
      'Adam/learning_rate': '[Adam]/learning_rate',
      'Adam/update_layer1/kernel/ApplyAdam': '[Adam]/update_layer1/kernel/ApplyAdam',
      'Adam/update_beta1': '[Adam]/update_beta1',
      Adam: '[Adam]/Adam',
      'init/NoOp_1': '[init]/init/NoOp_1', // the initializer's group on a second device
      init: '[init]/init',
      'save/SaveV2': '[save]/save/SaveV2',
      Assign: 'Assign', // a user's top-level assign is forward graph
    });
  });

  it('leaves a graph without training alone', () => {
    const ops = [
      { name: 'a', type: 'Const' },
      { name: 'tower_0/beta1_power', type: 'Mul' },
      { name: 'Adam_like/x', type: 'Add' },
    ];
    expect(hierarchyPaths(ops)).toEqual(['a', 'tower_0/beta1_power', 'Adam_like/x']);
  });
});
