import { boolFlag, command, GroupCommand, intFlag, listFlag, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { MeshctlOrchFlags } from '../../../src/modules/orch-access';
import { configureEntry, workloadGroupYaml } from '../../../src/modules/workload';
import { withOrchAccess } from '../orch-access-scope';

@command({
  program: 'meshctl',
  path: 'experimental workload',
  summary: 'Helpers for VMs and other workloads outside the orchestrator',
  group: true,
})
export class ExperimentalWorkload extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'experimental workload entry',
  summary: 'Commands for workload instances (entries) of a WorkloadGroup',
  group: true,
})
export class ExperimentalWorkloadEntry extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'experimental workload entry configure',
  summary: 'Generate the mesh config, cluster environment file, certificates and tokens a workload instance needs',
  flags: {
    autoregister: boolFlag('have the workload register itself (a WorkloadEntry is created for it)'),
    'capture-dns': boolFlag("capture the workload's outgoing DNS traffic"),
    clusterID: stringFlag('ID of the cluster the workload joins'),
    externalIP: stringFlag('external IP address of the workload'),
    file: stringFlag('WorkloadGroup file to read; empty reads the WorkloadGroup from the API server', { char: 'f' }),
    ingressIP: stringFlag('IP address of the gateway the workload reaches the control plane through'),
    ingressService: stringFlag('gateway service the workload reaches the control plane through, as <service>.<namespace>', {
      default: 'mesh-eastwestgateway',
    }),
    internalIP: stringFlag('internal IP address of the workload'),
    name: stringFlag('name of the WorkloadGroup'),
    // Replaces the global --namespace/-n here: the WorkloadGroup's namespace.
    namespace: stringFlag('namespace of the WorkloadGroup', { char: 'n', default: '' }),
    output: stringFlag('directory to write the generated files to', { char: 'o' }),
    revision: stringFlag('control plane revision the workload connects to', { char: 'r' }),
    tokenDuration: intFlag('lifetime of the generated token, in seconds', { default: 3600 }),
  },
})
export class ExperimentalWorkloadEntryConfigure extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(ExperimentalWorkloadEntryConfigure);
    const written = await withOrchAccess(this.scope, flags as MeshctlOrchFlags, (access) =>
      configureEntry(access.client, {
        systemNamespace: flags.meshNamespace,
        file: flags.file,
        name: flags.name,
        namespace: flags.namespace || undefined,
        output: flags.output,
        clusterId: flags.clusterID,
        autoregister: flags.autoregister,
        captureDns: flags['capture-dns'],
        ingressIP: flags.ingressIP,
        ingressService: flags.ingressService,
        internalIP: flags.internalIP,
        externalIP: flags.externalIP,
        revision: flags.revision,
        tokenDuration: flags.tokenDuration,
        warn: (message) => process.stderr.write(`${message}\n`),
      }),
    );
    process.stdout.write(`Configuration generation into directory ${flags.output} was successful: ${written.map((f) => f.split('/').pop()).join(', ')}\n`);
  }
}

@command({
  program: 'meshctl',
  path: 'experimental workload group',
  summary: 'Commands for WorkloadGroups, the templates of workload instances',
  group: true,
})
export class ExperimentalWorkloadGroup extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'experimental workload group create',
  summary: 'Write a WorkloadGroup as YAML',
  flags: {
    annotations: listFlag('annotations of the workload, as key=value', { char: 'a' }),
    labels: listFlag('labels of the workload, as key=value', { char: 'l' }),
    locality: stringFlag('locality of the workload'),
    name: stringFlag('name of the WorkloadGroup'),
    // Replaces the global --namespace/-n here: the WorkloadGroup's namespace.
    namespace: stringFlag('namespace of the WorkloadGroup', { char: 'n', default: '' }),
    network: stringFlag('network the workload is in'),
    ports: listFlag('ports of the workload, as name=port', { char: 'p' }),
    serviceAccount: stringFlag('service account of the workload', { char: 's', default: 'default' }),
  },
})
export class ExperimentalWorkloadGroupCreate extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(ExperimentalWorkloadGroupCreate);
    process.stdout.write(
      workloadGroupYaml({
        name: flags.name,
        namespace: flags.namespace,
        labels: flags.labels ?? [],
        annotations: flags.annotations ?? [],
        ports: flags.ports ?? [],
        serviceAccount: flags.serviceAccount,
        network: flags.network,
        locality: flags.locality,
      }),
    );
  }
}
