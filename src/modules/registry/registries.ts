import { inject, injectable } from 'inversify';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { ConfigResource } from '../config/resource';
import { UserError } from '../shared/user-error';
import { mockServiceEntries } from './mock';

/** The registries a daemon can read from (`--registries`). */
export const REGISTRY_NAMES = ['Orch', 'Mock'] as const;

/** The chosen registries and the cluster domain; bound by the program (the daemon maps its flags). */
export const RegistryOptionsToken = Symbol.for('mesh.RegistryOptions');
export interface RegistryOptions {
  /** As given to `--registries`. */
  registries: readonly string[];
  /** `--domain`, the suffix of the Mock registry's hosts. */
  domain: string;
}

export class RegistryOptionError extends UserError {}

/** The service registries besides config (ServiceEntry, WorkloadEntry): which are on, and what they hold. */
@injectable()
export class ServiceRegistries {
  readonly names: readonly string[];
  private readonly domain: string;

  constructor(@inject(RegistryOptionsToken) options: RegistryOptions) {
    const unknown = options.registries.filter((r) => !(REGISTRY_NAMES as readonly string[]).includes(r));
    if (unknown.length > 0) {
      throw new RegistryOptionError(`--registries: unknown registry ${unknown.map((u) => `"${u}"`).join(', ')} (choose from ${REGISTRY_NAMES.join(', ')})`);
    }
    this.names = [...options.registries];
    this.domain = options.domain;
  }

  has(name: (typeof REGISTRY_NAMES)[number]): boolean {
    return this.names.includes(name);
  }

  /** ServiceEntries the push pipeline adds to config's: the Mock registry's services. */
  serviceEntries(): ConfigResource<ServiceEntrySpec>[] {
    return this.has('Mock') ? mockServiceEntries(this.domain) : [];
  }
}
