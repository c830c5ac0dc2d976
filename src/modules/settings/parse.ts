import { Duration } from './duration';
import { SettingDefinition, SettingReader, SettingType, SettingValue, TYPE_EXAMPLES, TYPE_NAMES } from './types';
import { UserError } from '../shared/user-error';

/** A setting whose value does not parse as its type. The message is the one line users see. */
export class SettingValueError extends UserError {
  constructor(
    readonly setting: string,
    readonly value: string,
    readonly type: SettingType,
  ) {
    super(
      `invalid value ${JSON.stringify(value)} for setting ${setting}: expected ${TYPE_NAMES[type]} (type ${type}: ${TYPE_EXAMPLES[type]})`,
    );
  }
}

const INTEGER = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Parses one raw value as the given type, or throws SettingValueError. */
export function parseSettingValue(def: Pick<SettingDefinition, 'name' | 'type'>, raw: string): SettingValue {
  const fail = (): never => {
    throw new SettingValueError(def.name, raw, def.type);
  };
  const text = raw.trim();
  switch (def.type) {
    case 'S':
      return raw;
    case 'B': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      return fail();
    }
    case 'I': {
      if (!INTEGER.test(text)) return fail();
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : fail();
    }
    case 'F': {
      if (!FLOAT.test(text)) return fail();
      const n = Number(text);
      return Number.isFinite(n) ? n : fail();
    }
    case 'D':
      try {
        return Duration.parse(text);
      } catch {
        return fail();
      }
  }
}

/** The value a setting has when it is not set: its default parsed, or the type's zero value. */
export function defaultValue(def: SettingDefinition, reader?: SettingReader): SettingValue {
  const given = (reader !== undefined ? def.defaultFor?.[reader] : undefined) ?? def.default;
  if (given !== undefined) return parseSettingValue(def, given);
  switch (def.type) {
    case 'S':
      return '';
    case 'B':
      return false;
    case 'I':
    case 'F':
      return 0;
    case 'D':
      return Duration.ZERO;
  }
}
