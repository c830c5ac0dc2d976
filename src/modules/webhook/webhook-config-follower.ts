import { Informer, OrchClient, OrchObject, OrchResource } from '../orch';
import { MeshRoots } from './mesh-roots';
import { ReconcileQueue, ReconcileQueueOptions } from './reconcile-queue';

/**
 * What the controllers of webhook configurations share: an informer over one kind whose added
 * and edited objects (not resyncs) are offered to `consider`, all of them again when the mesh
 * roots change, and the reconcile queue the controller's work on each name goes through.
 */
export class WebhookConfigFollower<T extends OrchObject> {
  private informer: Informer<T> | undefined;
  private queue: ReconcileQueue<string> | undefined;
  private unwatchRoots: (() => void) | undefined;

  constructor(
    private readonly orch: OrchClient,
    private readonly roots: MeshRoots,
    private readonly resource: OrchResource,
  ) {}

  get running(): boolean {
    return this.informer !== undefined;
  }

  /** Starts following; `rootsChanged` runs (for a log line) before every object is offered again. */
  start(work: ReconcileQueueOptions<string>, consider: (config: T) => void, rootsChanged: () => void): void {
    if (this.informer) return;
    this.queue = new ReconcileQueue<string>(work);
    const informer = this.orch.informer<T>(this.resource);
    informer.on({
      add: (c) => consider(c),
      update: (_old, c, resync) => {
        if (!resync) consider(c);
      },
    });
    this.unwatchRoots = this.roots.onChange(() => {
      rootsChanged();
      for (const c of informer.list()) consider(c);
    });
    this.informer = informer;
    informer.start();
  }

  stop(): void {
    this.unwatchRoots?.();
    this.informer?.stop();
    this.queue?.stop();
    this.unwatchRoots = undefined;
    this.informer = undefined;
    this.queue = undefined;
  }

  /** Queues the reconcile of `name` (nothing once stopped). */
  enqueue(name: string): void {
    this.queue?.add(name);
  }

  get(name: string): T | undefined {
    return this.informer?.get(name);
  }

  list(): readonly T[] {
    return this.informer?.list() ?? [];
  }
}
