/** Go's text/template with the sprig functions, over Go-typed values (see values.ts). */
export { Template, FuncMap, GoFunc, FuncError, ParamType, ExecLimits, DEFAULT_LIMITS, OPEN_STRUCT, readField } from './exec';
export { TemplateError } from './parser';
export { BUILTINS, queryEscape } from './builtins';
export { SPRIG, empty, strval, toInt64 } from './sprig';
export { formatValue, formatFloat, sprintf, quoteGo } from './format';
export * from './values';
