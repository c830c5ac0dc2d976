import type { Operations } from '../operations';
import { type ControllerContext, typeOf } from './context';
import { WorkQueue } from './work-queue';

/*
 * The namespace controller (a namespace marked for deletion has its content deleted, then
 * goes) and the service account controller (every namespace gets its `default` account).
 */

export class NamespaceControllers {
  private readonly finalize: WorkQueue;
  private readonly accounts: WorkQueue;

  constructor(
    private readonly ctx: ControllerContext,
    ops: Operations,
  ) {
    this.finalize = new WorkQueue(async (name) => ops.finalizeNamespace(name));
    this.accounts = new WorkQueue((name) => this.ensureDefaultAccount(name));
    ops.namespaceFinalizer = (name) => this.finalize.add(name);
    ctx.store.onChange((e) => {
      if (e.key === '/namespaces' && e.type !== 'DELETED' && !e.object.metadata.deletionTimestamp) this.accounts.add(e.object.metadata.name);
      if (e.key === '/serviceaccounts' && e.type === 'DELETED' && e.object.metadata.name === 'default') this.accounts.add(e.object.metadata.namespace);
    });
  }

  start(): void {
    for (const ns of this.ctx.store.items('/namespaces')) this.accounts.add(ns.metadata.name);
  }

  stop(): void {
    this.finalize.stop();
    this.accounts.stop();
  }

  private async ensureDefaultAccount(namespace: string): Promise<void> {
    const ns = this.ctx.store.get('/namespaces', '', namespace);
    if (!ns || ns.metadata.deletionTimestamp) return;
    if (this.ctx.store.get('/serviceaccounts', namespace, 'default')) return;
    await this.ctx.ops.create(typeOf(this.ctx, 'v1', 'ServiceAccount'), 'v1', namespace, { metadata: { name: 'default', namespace } }, { admission: false });
  }
}
