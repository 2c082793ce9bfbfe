// What a delete says of the records' links before anything is deleted (issues 19, 31), named from the resource table
// (linksTo): a deal's, note's or segment's own links are kept in its backup line and made again when the backup is
// imported (src/import/files/backup-links.ts); other records' links to it are lost with it.
import { linksTo } from '../../api/resources.js';

/** What goes with the records' links ('' for a resource with none); `backup`: their backup is kept. */
export function linksLostText(resource: string, backup = true): string {
  const all = linksTo(resource);
  const own = backup ? all.filter((l) => l.path.startsWith(`${resource}/`)) : [];
  const lost = all.filter((l) => !own.includes(l)).map((l) => `${l.words} (${l.path})`);
  const kept =
    own.length > 0
      ? `Their own links (${own.map((l) => l.words.replace(/^their /, '')).join(', ')}) are kept with them, and made again to the records still there when that file is imported.`
      : '';
  if (lost.length === 0) return kept;
  return (
    `${kept ? `${kept} ` : ''}Links ${own.length > 0 ? 'to them' : 'to and from them'} are not kept and do not come back when they are created again: ${lost.join(', ')}. ` +
    `A snapshot before (\`crm snapshot DIR --links\`) and${backup ? ', instead of importing the backup,' : ''} a restore after (\`crm restore DIR --resources ${resource} --links\`) bring them back.`
  );
}
