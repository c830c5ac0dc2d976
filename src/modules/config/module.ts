import { ContainerModule } from 'inversify';
import { KINDS } from './kinds';
import { MemoryConfigStore } from './memory-store';
import { KindRegistry } from './validate';

export const KindRegistryToken = Symbol.for('mesh.KindRegistry');

/** The config kinds and the store sources write into (the file source is made by the program for its directory). */
export function configModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(KindRegistryToken).toDynamicValue(() => new KindRegistry(KINDS)).inSingletonScope();
    bind(MemoryConfigStore).toSelf().inSingletonScope();
  });
}
