import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { DefinitionFile } from './definition/definition.types';
import { FactoryFile } from './entities/factory-file.entity';

/** The files of a factory's applied definition. */
@Injectable()
export class FactoryFileStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  list(factoryId: string): Promise<FactoryFile[]> {
    return this.dataSource
      .getRepository(FactoryFile)
      .find({ where: { factoryId }, order: { path: 'ASC' } });
  }

  /** Replaces the factory's files with `files`. */
  async replace(manager: EntityManager, factoryId: string, files: DefinitionFile[]) {
    const repo = manager.getRepository(FactoryFile);
    await repo.delete({ factoryId });
    if (files.length)
      await repo.insert(files.map((f) => ({ factoryId, path: f.path, content: f.content })));
  }
}
