import { ContainerModule } from 'inversify';
import { KINDS } from './kinds';
import { KindRegistry } from './validate';

export const KindRegistryToken = Symbol.for('mesh.KindRegistry');

export function configModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(KindRegistryToken).toDynamicValue(() => new KindRegistry(KINDS)).inSingletonScope();
  });
}
