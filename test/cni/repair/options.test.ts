import { expect } from 'chai';
import {
  parseRepairOptions,
  podFieldSelector,
  RepairFlagName,
  RepairFlagValues,
  repairOptionsFrom,
  RepairOptionsError,
  RepairValues,
} from '../../../src/modules/cni/repair';
import { Settings } from '../../../src/modules/settings';

/** The values the spec's defaults give. */
function defaults(overrides: Partial<RepairValues> = {}): RepairValues {
  return {
    enabled: true,
    nodeName: '',
    labelPods: false,
    deletePods: false,
    labelKey: 'cni.mesh.io/uninitialized',
    labelValue: 'true',
    fieldSelectors: '',
    labelSelectors: '',
    initContainerName: 'mesh-validation',
    initContainerExitCode: 126,
    initContainerTerminationMessage: '',
    sidecarAnnotation: 'sidecar.mesh.io/status',
    ...overrides,
  };
}

/** The repair flags as oclif gives them when none is typed: every default. */
const FLAG_DEFAULTS: RepairFlagValues = {
  'repair-enabled': true,
  'repair-node-name': '',
  'repair-label-pods': false,
  'repair-delete-pods': false,
  'repair-broken-pod-label-key': 'cni.mesh.io/uninitialized',
  'repair-broken-pod-label-value': 'true',
  'repair-field-selectors': '',
  'repair-label-selectors': '',
  'repair-init-container-name': 'mesh-validation',
  'repair-init-container-exit-code': 126,
  'repair-init-container-termination-message': '',
  'repair-sidecar-annotation': 'sidecar.mesh.io/status',
};

describe('repair: options', () => {
  it('accepts the defaults', () => {
    expect(parseRepairOptions(defaults())).to.deep.equal(defaults());
  });

  const bad: [string, Partial<RepairValues>, string][] = [
    ['a node name that is no DNS subdomain', { nodeName: 'Node_1' }, 'invalid --repair-node-name (REPAIR_NODE_NAME) "Node_1": a node name is a lower-case DNS subdomain'],
    ['a label key with two slashes', { labelPods: true, labelKey: 'a/b/c' }, 'invalid --repair-broken-pod-label-key (REPAIR_BROKEN_POD_LABEL_KEY) "a/b/c": not a label key'],
    ['a label value with a space', { labelPods: true, labelValue: 'not ok' }, 'invalid --repair-broken-pod-label-value (REPAIR_BROKEN_POD_LABEL_VALUE) "not ok"'],
    ['an unknown field', { fieldSelectors: 'spec.color=red' }, 'invalid --repair-field-selectors (REPAIR_FIELD_SELECTORS) "spec.color=red": field "spec.color" cannot select pods'],
    ['a field term without operator', { fieldSelectors: 'status.phase' }, 'has no operator'],
    ['a malformed label selector', { labelSelectors: 'app in (a' }, 'invalid --repair-label-selectors (REPAIR_LABEL_SELECTORS) "app in (a"'],
    ['a container name with capitals', { initContainerName: 'Mesh' }, 'invalid --repair-init-container-name (REPAIR_INIT_CONTAINER_NAME) "Mesh": a container name is a lower-case DNS label'],
    ['a negative exit code', { initContainerExitCode: -1 }, 'invalid --repair-init-container-exit-code (REPAIR_INIT_CONTAINER_EXIT_CODE) -1: an exit code is an integer from 0 to 255'],
    ['an exit code above 255', { initContainerExitCode: 256 }, 'from 0 to 255'],
    ['an annotation key with a bad prefix', { sidecarAnnotation: 'Sidecar.Mesh/status' }, 'invalid --repair-sidecar-annotation (REPAIR_SIDECAR_ANNOTATION) "Sidecar.Mesh/status": not an annotation key'],
  ];
  for (const [what, overrides, message] of bad) {
    it(`rejects ${what}, naming the flag and setting`, () => {
      expect(() => parseRepairOptions(defaults(overrides))).to.throw(RepairOptionsError, message);
    });
  }

  it('does not check the label while labelling is off, nor anything while repair is disabled', () => {
    expect(() => parseRepairOptions(defaults({ labelKey: 'a/b/c' }))).not.to.throw();
    expect(() => parseRepairOptions(defaults({ enabled: false, nodeName: 'Bad_Name', labelSelectors: '(((', labelPods: true, labelKey: '' }))).not.to.throw();
  });

  it('takes empty filters as "any" (the incumbent): no annotation, any init container, any exit code', () => {
    const options = parseRepairOptions(defaults({ sidecarAnnotation: '', initContainerName: '', initContainerExitCode: 0 }));
    expect(options.initContainerExitCode).to.equal(0);
  });

  describe('field selector of the pod listing', () => {
    it('is the configured selectors then the node', () => {
      expect(podFieldSelector(parseRepairOptions(defaults({ nodeName: 'node-1', fieldSelectors: 'status.phase=Pending' })))).to.equal(
        'status.phase=Pending,spec.nodeName=node-1',
      );
      expect(podFieldSelector(parseRepairOptions(defaults({ nodeName: 'node-1' })))).to.equal('spec.nodeName=node-1');
      expect(podFieldSelector(parseRepairOptions(defaults()))).to.equal('');
    });
  });

  describe('from flags and settings', () => {
    const settings = (env: Record<string, string>) => new Settings('install-cni', env);
    const typed = (...names: RepairFlagName[]) => (flag: RepairFlagName) => names.includes(flag);

    it('uses the spec defaults when neither is given', () => {
      expect(repairOptionsFrom(FLAG_DEFAULTS, settings({}), typed())).to.deep.equal(defaults());
    });

    it('prefers a setting from the environment to a flag default', () => {
      const options = repairOptionsFrom(
        FLAG_DEFAULTS,
        settings({ REPAIR_NODE_NAME: 'node-1', REPAIR_LABEL_PODS: 'true', REPAIR_INIT_CONTAINER_EXIT_CODE: '3', REPAIR_ENABLED: 'false' }),
        typed(),
      );
      expect(options).to.include({ nodeName: 'node-1', labelPods: true, initContainerExitCode: 3, enabled: false });
    });

    it('prefers a typed flag to the setting', () => {
      const options = repairOptionsFrom(
        { ...FLAG_DEFAULTS, 'repair-node-name': 'from-flag', 'repair-enabled': true },
        settings({ REPAIR_NODE_NAME: 'from-env', REPAIR_ENABLED: 'false' }),
        typed('repair-node-name', 'repair-enabled'),
      );
      expect(options).to.include({ nodeName: 'from-flag', enabled: true });
    });

    it('uses the setting when the flags are absent altogether', () => {
      expect(repairOptionsFrom({}, settings({ REPAIR_DELETE_PODS: '1' }), typed())).to.deep.equal(defaults({ deletePods: true }));
    });

    it('names the flag or the setting that gave a bad value', () => {
      expect(() => repairOptionsFrom({ ...FLAG_DEFAULTS, 'repair-label-selectors': 'a in (' }, settings({}), typed('repair-label-selectors'))).to.throw(
        RepairOptionsError,
        /^invalid --repair-label-selectors "a in \(":/,
      );
      expect(() => repairOptionsFrom(FLAG_DEFAULTS, settings({ REPAIR_LABEL_SELECTORS: 'a in (' }), typed())).to.throw(
        RepairOptionsError,
        /^invalid REPAIR_LABEL_SELECTORS "a in \(":/,
      );
    });
  });
});
