/** `Message.record_followers(model, document)`: the contacts following a record (spec §6.5 rule 3). */
import { QuerySet, currentEnv, withEnv, type Model } from 'fieldforge';

export async function recordFollowers(model: string, document: number): Promise<Model[]> {
  return withEnv({ su: true }, async () => {
    const { registry } = currentEnv();
    const rows = await new QuerySet(registry.meta('Followers')).filter({ model, document }).read(['contact']);
    const ids = rows.map((r) => (r.contact as { id: number }).id);
    return ids.length ? new QuerySet(registry.meta('Contact')).with_archived().filter({ id__in: ids }).order_by('id ASC').all() : [];
  });
}
