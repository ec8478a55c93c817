import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A team's managed secret; the value is only ever stored encrypted (see SecretCipher). */
@Entity('team_secrets')
export class TeamSecret {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column({ type: 'varchar', length: 512, nullable: true })
  description: string | null;

  @Column({ type: 'mediumblob' })
  ciphertext: Buffer;

  @Column({ name: 'created_by', type: 'varchar', length: 22, nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
