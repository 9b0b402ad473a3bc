/**
 * Bulk uploads of a data batch (`modules/data-uploads.ts`) create their attachments before the
 * records that own them exist; once the records are created, each attachment is given its record
 * here, in one UPDATE of model code for the whole batch — the bulk form of what the write path does
 * for a File field, elevated like it (the caller's right is on the owning records).
 */
import { sql } from '../../db/sql-fragment.js';
import { currentEnv } from '../env.js';
import { runSql } from '../execute-sql.js';

/** Makes attachment `attachmentIds[i]` belong to record `records[i]` (of the model its row already names). */
export async function setAttachmentRecords(attachmentIds: readonly number[], records: readonly number[]): Promise<void> {
  const attachment = currentEnv().registry.meta('Attachment');
  await runSql(sql`UPDATE ${sql.table(attachment.table)} AS a SET record = owner.record
    FROM unnest(${attachmentIds}::int[], ${records}::int[]) AS owner(id, record) WHERE a.id = owner.id`);
}
