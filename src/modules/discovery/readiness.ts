import { injectable } from 'inversify';
import { Readiness } from '../debug';

/** Whether the daemon serves config yet: `/ready` on the HTTP and HTTPS addresses answers from it. */
@injectable()
export class DaemonReadiness {
  private ready = false;

  get isReady(): boolean {
    return this.ready;
  }

  set(ready: boolean): void {
    this.ready = ready;
  }

  state(): Readiness {
    return this.ready ? { ready: true } : { ready: false, reason: 'config not loaded yet' };
  }
}
