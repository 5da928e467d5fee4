/**
 * Auxiliary subgraphs, set aside as TensorBoard does: variable initializers and `init`, `save`,
 * the `gradients/` ops and the optimizer's update ops (with its slots and Adam's beta powers)
 * mirror the forward graph; drawn among it they hide it. Each such op gets a side group, and its
 * path in the drawn hierarchy starts with that group's key (`[init]/layer1/kernel/Assign`). A key
 * in brackets can never be an op's name: TensorFlow's op names have no brackets.
 */

export interface AuxOp {
  name: string;
  type: string;
}

/** Ops that apply an optimizer's update: `ApplyAdam`, `ResourceApplyGradientDescent`, ... */
const UPDATE_TYPE = /^(Resource)?(Sparse)?Apply[A-Z]/;
const GRADIENTS = /^gradients(_\d+)?$/;
const SAVE = /^save(_\d+)?$/;
const INIT_OP = /^init(_\d+)?$/;
/** Adam's accumulators of beta1^t and beta2^t, top-level variables of the optimizer. */
const BETA_POWER = /^beta[12]_power(_\d+)?$/;

export function sideKey(group: string): string {
  return `[${group}]`;
}

/** Whether a path component is a side group's key. */
export function isSideKey(component: string): boolean {
  return component.startsWith('[') && component.endsWith(']');
}

/**
 * Each op's path in the drawn hierarchy: its name for a forward op, its side group's key followed
 * by its name otherwise (the group's own top-level scope dropped: `gradients/x` is `[gradients]/x`).
 */
export function hierarchyPaths(ops: readonly AuxOp[]): string[] {
  const optimizers = new Set<string>();
  let adam: string | null = null;
  for (const op of ops) {
    if (UPDATE_TYPE.test(op.type)) {
      const top = firstComponent(op.name);
      if (top !== op.name) {
        optimizers.add(top);
        if (adam === null && op.type.endsWith('ApplyAdam')) {
          adam = top;
        }
      }
    }
  }
  const slotOf = (components: string[]): string | null => {
    for (let i = 1; i < components.length; i++) {
      const base = components[i].replace(/_\d+$/, '');
      if (optimizers.has(base)) {
        return base;
      }
    }
    return null;
  };
  return ops.map((op) => {
    const components = op.name.split('/');
    const top = components[0];
    const last = components[components.length - 1];
    if (GRADIENTS.test(top) && components.length > 1) {
      return within('gradients', top === 'gradients' ? components.slice(1) : components);
    }
    if (SAVE.test(top)) {
      return within('save', components);
    }
    if (
      (INIT_OP.test(top) && op.type === 'NoOp') || // `init`, and its per-device `init/NoOp_1`
      components.includes('Initializer') ||
      last === 'initial_value' ||
      (op.type === 'Assign' && last === 'Assign' && components.length > 1)
    ) {
      return within('init', components);
    }
    if (optimizers.has(top)) {
      return within(top, components.length > 1 ? components.slice(1) : components);
    }
    const slot = slotOf(components);
    if (slot !== null) {
      return within(slot, components);
    }
    if (adam !== null && BETA_POWER.test(top)) {
      return within(adam, components);
    }
    return op.name;
  });
}

function within(group: string, components: string[]): string {
  return `${sideKey(group)}/${components.join('/')}`;
}

function firstComponent(name: string): string {
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(0, slash);
}
