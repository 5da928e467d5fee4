/**
 * Whether an op landed where it asked to be: its requested device is a partial spec
 * (`/device:GPU:1`, `/gpu:1`, `/job:worker/task:0`) that the assigned full name must satisfy in
 * every field it sets, as placeviz's DeviceSpec.matches does.
 */

interface SpecFields {
  job?: string;
  replica?: string;
  task?: string;
  type?: string;
  index?: string;
}

/** The fields a device string sets, or null when it cannot be read. */
function parseDeviceSpec(text: string): SpecFields | null {
  const fields: SpecFields = {};
  const body = text.startsWith('/') ? text.slice(1) : text;
  if (body === '') {
    return fields;
  }
  for (const component of body.split('/')) {
    const [key, ...values] = component.split(':');
    if ((key === 'job' || key === 'replica' || key === 'task') && values.length === 1) {
      fields[key] = values[0];
    } else if (key === 'device' && (values.length === 1 || values.length === 2)) {
      setDevice(fields, values[0], values[1]);
    } else if (values.length === 1 && /^[A-Za-z][A-Za-z0-9_]*$/.test(key)) {
      setDevice(fields, key, values[0]);
    } else {
      return null;
    }
  }
  return fields;
}

function setDevice(fields: SpecFields, type: string, index: string | undefined): void {
  fields.type = type.toUpperCase();
  if (index !== undefined && index !== '*') {
    fields.index = String(Number(index));
  }
}

/**
 * True when `requested` is set, readable, and names a device other than `assigned` (a request
 * placeviz could not honour, e.g. soft placement moved the op). Unreadable requests are not flagged:
 * the placer would have rejected them, so there is nothing to mark.
 */
export function requestMismatch(requested: string, assigned: string | undefined): boolean {
  if (requested === '' || assigned === undefined) {
    return false;
  }
  const want = parseDeviceSpec(requested);
  const have = parseDeviceSpec(assigned);
  if (want === null || have === null) {
    return false;
  }
  return (Object.keys(want) as (keyof SpecFields)[]).some((key) => want[key] !== have[key]);
}
