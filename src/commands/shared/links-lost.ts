// What a delete loses for good even with its backup (issue 19): the links to and from the records, named
// from the resource table (linksTo), said before anything is deleted.
import { linksTo } from '../../api/resources.js';

/** `Links to and from them are not kept …: their contacts (deals/{id}/contacts), …` ('' for a resource with none). */
export function linksLostText(resource: string): string {
  const links = linksTo(resource).map((l) => `${l.words} (${l.path})`);
  if (links.length === 0) return '';
  return (
    `Links to and from them are not kept and do not come back when they are created again: ${links.join(', ')}. ` +
    `A snapshot before (\`crm snapshot DIR --links\`) and a restore after (\`crm restore DIR --resources ${resource} --links\`) bring them back.`
  );
}
