import { expect } from 'chai';
import {
  parseRepairOptions,
  podFieldSelector,
  RepairOptionsError,
  RepairValues,
} from '../../../../src/modules/cni/repair';
import { repairValues as defaults } from './pods';

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
});
