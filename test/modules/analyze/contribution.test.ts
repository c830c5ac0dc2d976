import { expect } from 'chai';
import { createContainer } from '../../../src/container';
import { Analyzer, AnalyzerContribution, AnalyzerRegistry, MessageCatalogue, ObjectSet, runAnalyzers, toAnalysisObject } from '../../../src/modules/analyze';
import { DEFAULT_MESH_CONFIG } from '../../../src/modules/mesh-config';
import { REPO_ROOT } from '../../helpers/run-cli';

/** A plugin adds an analyzer by binding it to the Analyzer contribution point. */
describe('the Analyzer contribution point', () => {
  it('lists a contributed analyzer beside the mesh\'s own and runs it', () => {
    const { container } = createContainer({ program: 'meshctl', env: {}, cwd: REPO_ROOT });
    const contributed: Analyzer = {
      metadata: { name: 'example.NoLatestTagAnalyzer', description: 'flags pods without labels', inputs: ['Pod'] },
      analyze(ctx) {
        for (const pod of ctx.objects.of('Pod')) if (Object.keys(pod.labels).length === 0) ctx.report('PodMissingProxy', pod, [pod.name]);
      },
    };
    container.bind(AnalyzerContribution).toConstantValue(contributed);
    const registry = container.get(AnalyzerRegistry);
    const names = registry.all().map((a) => a.metadata.name);
    expect(names).to.include('example.NoLatestTagAnalyzer').and.include('gateway.IngressGatewayPortAnalyzer').and.include('schema.ValidationAnalyzer.Gateway');

    const objects = new ObjectSet();
    objects.add(toAnalysisObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare', namespace: 'shop' } }, { file: 'pods.yaml', line: 3 })!);
    const messages = runAnalyzers({ analyzers: [contributed], objects, meshConfig: DEFAULT_MESH_CONFIG, systemNamespace: 'mesh-system', catalogue: MessageCatalogue.load() });
    expect(messages).to.deep.equal([
      { code: 'MSH0103', name: 'PodMissingProxy', level: 'Warning', resource: 'Pod shop/bare', namespace: 'shop', origin: { file: 'pods.yaml', line: 3 }, text: 'The pod bare is missing the Mesh proxy. This can often be resolved by restarting or redeploying the workload.' },
    ]);
  });
});
