export { RepairController, RepairSink, RepairAction, RepairTiming, RepairLogger } from './controller';
export {
  parseRepairOptions,
  podFieldSelector,
  RepairOptions,
  RepairValues,
  RepairValueSource,
  RepairOptionsError,
  REPAIR_PARAMETERS,
} from './options';
export { isBrokenPod, BrokenPodCriteria } from './broken-pod';
export { parseFieldSelector, parsePodFieldSelector, parseLabelSelector, escapeFieldValue, SelectorError, POD_SELECTABLE_FIELDS } from './selectors';
export type { FieldRequirement, FieldOperator, LabelRequirement, LabelOperator } from './selectors';
