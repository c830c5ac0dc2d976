import { expect } from 'chai';
import { BrokenPodCriteria, isBrokenPod } from '../../../../src/modules/cni/repair';
import { brokenPod, completed, crashLooping, pod, running, SIDECAR_ANNOTATION, INIT_CONTAINER } from './pods';

const CRITERIA: BrokenPodCriteria = {
  sidecarAnnotation: SIDECAR_ANNOTATION,
  initContainerName: INIT_CONTAINER,
  initContainerExitCode: 126,
  initContainerTerminationMessage: '',
};

describe('repair: which pods the install race broke', () => {
  it('a pod with the sidecar whose validation container last exited 126', () => {
    expect(isBrokenPod(brokenPod('a'), CRITERIA)).to.equal(true);
  });

  it('not a pod without the sidecar annotation (its value does not matter)', () => {
    expect(isBrokenPod(brokenPod('a', { sidecar: false }), CRITERIA)).to.equal(false);
    const emptyValue = brokenPod('a');
    emptyValue.metadata!.annotations = { [SIDECAR_ANNOTATION]: '' };
    expect(isBrokenPod(emptyValue, CRITERIA)).to.equal(true);
  });

  it('not a pod whose validation container exited otherwise, runs, or never ran', () => {
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(1)] }), CRITERIA)).to.equal(false);
    expect(isBrokenPod(pod('a', { initContainers: [running()] }), CRITERIA)).to.equal(false);
    expect(isBrokenPod(pod('a', { initContainers: [] }), CRITERIA)).to.equal(false);
    const noStatus = pod('a');
    delete noStatus.status;
    expect(isBrokenPod(noStatus, CRITERIA)).to.equal(false);
  });

  it('not a pod whose validation container has now completed, whatever its last run was', () => {
    expect(isBrokenPod(pod('a', { initContainers: [completed(126)] }), CRITERIA)).to.equal(false);
    const exitedZero = pod('a', { initContainers: [crashLooping()] });
    exitedZero.status!.initContainerStatuses![0].state = { terminated: { exitCode: 0 } };
    expect(isBrokenPod(exitedZero, CRITERIA)).to.equal(false);
  });

  it('judges by the last termination: a first failure still running into its restart is not yet broken', () => {
    // The incumbent waits for the crash loop: the current failure becomes lastState on restart.
    const firstFailure = pod('a', { initContainers: [{ ...running(), state: { terminated: { exitCode: 126, reason: 'Error' } } }] });
    expect(isBrokenPod(firstFailure, CRITERIA)).to.equal(false);
  });

  it('only looks at the named init container, or at any when no name is set', () => {
    const other = pod('a', { initContainers: [crashLooping(126, undefined, 'other-init')] });
    expect(isBrokenPod(other, CRITERIA)).to.equal(false);
    expect(isBrokenPod(other, { ...CRITERIA, initContainerName: '' })).to.equal(true);
  });

  it('takes any exit code when the expected one is 0', () => {
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(7)] }), { ...CRITERIA, initContainerExitCode: 0 })).to.equal(true);
  });

  it('looks at every pod when no sidecar annotation is configured', () => {
    expect(isBrokenPod(brokenPod('a', { sidecar: false }), { ...CRITERIA, sidecarAnnotation: '' })).to.equal(true);
  });

  it('matches the termination message exactly, ignoring surrounding white space (the incumbent rule)', () => {
    const criteria = { ...CRITERIA, initContainerTerminationMessage: '  no CNI config  ' };
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(126, 'no CNI config\n')] }), criteria)).to.equal(true);
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(126, 'error: no CNI config found')] }), criteria)).to.equal(false);
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(126)] }), criteria)).to.equal(false);
    // Both must match.
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(1, 'no CNI config')] }), criteria)).to.equal(false);
    expect(isBrokenPod(pod('a', { initContainers: [crashLooping(1, 'no CNI config')] }), { ...criteria, initContainerExitCode: 0 })).to.equal(true);
  });
});
