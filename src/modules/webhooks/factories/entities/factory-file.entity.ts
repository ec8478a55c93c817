import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One file of a factory's applied definition. */
@Entity('factory_files')
export class FactoryFile {
  @PrimaryColumn({ name: 'factory_id', type: 'varchar', length: 22 })
  factoryId: string;

  @PrimaryColumn({ type: 'varchar', length: 512 })
  path: string;

  @Column({ type: 'mediumtext' })
  content: string;
}
