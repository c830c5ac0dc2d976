import { isDnsLabel, isDnsSubdomain, labelValueProblem, qualifiedNameProblem } from './names';
import { escapeFieldValue, parseLabelSelector, parsePodFieldSelector, SelectorError } from './selectors';
import { UserError } from '../../shared/user-error';

/** A repair option with a bad value; the message names the flag or setting and the value. */
export class RepairOptionsError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

/** The race-repair options of spec/02, as flags and settings give them. */
export interface RepairValues {
  enabled: boolean;
  /** Node whose pods are managed; empty: all nodes. */
  nodeName: string;
  labelPods: boolean;
  deletePods: boolean;
  labelKey: string;
  labelValue: string;
  /** Extra field selectors for the pod listing (`field=value,...`); empty: none. */
  fieldSelectors: string;
  /** Extra label selectors for the pod listing; empty: none. */
  labelSelectors: string;
  initContainerName: string;
  initContainerExitCode: number;
  initContainerTerminationMessage: string;
  sidecarAnnotation: string;
}

declare const checked: unique symbol;

/** Checked values; only parseRepairOptions makes them (the brand exists for the compiler only). */
export type RepairOptions = Readonly<RepairValues> & { readonly [checked]: true };

/** Each option's flag (without `--`) and setting, as spec/02 names them. */
export const REPAIR_PARAMETERS = {
  enabled: { flag: 'repair-enabled', setting: 'REPAIR_ENABLED' },
  nodeName: { flag: 'repair-node-name', setting: 'REPAIR_NODE_NAME' },
  labelPods: { flag: 'repair-label-pods', setting: 'REPAIR_LABEL_PODS' },
  deletePods: { flag: 'repair-delete-pods', setting: 'REPAIR_DELETE_PODS' },
  labelKey: { flag: 'repair-broken-pod-label-key', setting: 'REPAIR_BROKEN_POD_LABEL_KEY' },
  labelValue: { flag: 'repair-broken-pod-label-value', setting: 'REPAIR_BROKEN_POD_LABEL_VALUE' },
  fieldSelectors: { flag: 'repair-field-selectors', setting: 'REPAIR_FIELD_SELECTORS' },
  labelSelectors: { flag: 'repair-label-selectors', setting: 'REPAIR_LABEL_SELECTORS' },
  initContainerName: { flag: 'repair-init-container-name', setting: 'REPAIR_INIT_CONTAINER_NAME' },
  initContainerExitCode: { flag: 'repair-init-container-exit-code', setting: 'REPAIR_INIT_CONTAINER_EXIT_CODE' },
  initContainerTerminationMessage: {
    flag: 'repair-init-container-termination-message',
    setting: 'REPAIR_INIT_CONTAINER_TERMINATION_MESSAGE',
  },
  sidecarAnnotation: { flag: 'repair-sidecar-annotation', setting: 'REPAIR_SIDECAR_ANNOTATION' },
} as const;

/** Names where a value came from, for error messages: `--repair-x` or `REPAIR_X`. */
export type RepairValueSource = (option: keyof RepairValues) => string;

const EITHER_SOURCE: RepairValueSource = (option) => `--${REPAIR_PARAMETERS[option].flag} (${REPAIR_PARAMETERS[option].setting})`;

/**
 * Checks the values. Nothing is checked when repair is disabled: its options are then unused,
 * and a mistake in them must not stop the installer.
 */
export function parseRepairOptions(values: RepairValues, sourceOf: RepairValueSource = EITHER_SOURCE): RepairOptions {
  const fail = (option: keyof RepairValues, why: string): never => {
    throw new RepairOptionsError(`invalid ${sourceOf(option)} ${JSON.stringify(values[option])}: ${why}`);
  };
  if (values.enabled) {
    if (values.nodeName !== '' && !isDnsSubdomain(values.nodeName)) fail('nodeName', 'a node name is a lower-case DNS subdomain');
    if (values.labelPods) {
      const keyProblem = qualifiedNameProblem(values.labelKey);
      if (keyProblem) fail('labelKey', `not a label key: ${keyProblem}`);
      const valueProblem = labelValueProblem(values.labelValue);
      if (valueProblem) fail('labelValue', valueProblem);
    }
    for (const option of ['fieldSelectors', 'labelSelectors'] as const) {
      try {
        if (option === 'fieldSelectors') parsePodFieldSelector(values.fieldSelectors);
        else parseLabelSelector(values.labelSelectors);
      } catch (err) {
        if (err instanceof SelectorError) fail(option, err.message);
        throw err;
      }
    }
    if (values.initContainerName !== '' && !isDnsLabel(values.initContainerName)) {
      fail('initContainerName', 'a container name is a lower-case DNS label (at most 63 characters of a-z, 0-9 and "-")');
    }
    const code = values.initContainerExitCode;
    if (!Number.isInteger(code) || code < 0 || code > 255) fail('initContainerExitCode', 'an exit code is an integer from 0 to 255 (0 matches any)');
    if (values.sidecarAnnotation !== '') {
      const problem = qualifiedNameProblem(values.sidecarAnnotation);
      if (problem) fail('sidecarAnnotation', `not an annotation key: ${problem}`);
    }
  }
  return { ...values } as RepairOptions;
}

/** The field selector of the pod listing: the configured ones, then the node's, as the incumbent joins them. */
export function podFieldSelector(options: RepairOptions): string {
  const terms = [options.fieldSelectors, options.nodeName ? `spec.nodeName=${escapeFieldValue(options.nodeName)}` : ''];
  return terms.filter((t) => t !== '').join(',');
}
