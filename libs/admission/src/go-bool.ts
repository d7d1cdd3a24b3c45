/**
 * Go's strconv.ParseBool, which Kubernetes users know from every other annotation: exactly these
 * spellings, nothing else (no `yes`, no surrounding spaces). Undefined means "not a boolean".
 */
export function parseGoBool(value: string): boolean | undefined {
  switch (value) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
    default:
      return undefined;
  }
}

export const GO_BOOL_SPELLINGS = '1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False';
