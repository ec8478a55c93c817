import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('teams')
export class Team {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
