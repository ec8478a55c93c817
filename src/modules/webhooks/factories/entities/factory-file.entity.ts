import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { asciiId, exactText } from '../../../../database/column-types';
import { Factory } from './factory.entity';

/** One file of a factory's applied definition. */
@Entity('factory_files')
export class FactoryFile {
  @PrimaryColumn({ name: 'factory_id', ...asciiId(22) })
  @ForeignKey(() => Factory, { name: 'fk_factory_files_factory', onDelete: 'CASCADE' })
  factoryId: string;

  @PrimaryColumn(exactText(512))
  path: string;

  @Column({ type: 'mediumtext' })
  content: string;
}
