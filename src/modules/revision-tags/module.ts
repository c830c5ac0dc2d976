import { ContainerModule } from 'inversify';
import { RevisionTags } from './revision-tags';

/** meshctl's revision tags: read and written with the command's orchestrator client. */
export function revisionTagsModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(RevisionTags).toSelf().inSingletonScope();
  });
}
