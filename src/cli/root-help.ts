// `crm --help` alone is answered by bin/crm without building the command tree (start-up: building
// every group and running commander took as long as Node's own start). The text is made at build
// time by rootHelpTemplate (root-help-template.ts) with commander's own formatHelp, its width-dependent
// parts (each item and the wrapped description) left as placeholders that commander's Help fills in
// here for the terminal's width, as commander itself would. A test compares the two at many widths.
import { Help } from '@commander-js/extra-typings';

/** One width-dependent part: an item (term, the width terms are padded to, description) or wrapped text. */
export type HelpPart = { item: [term: string, termWidth: number, description: string] } | { wrap: string };

export interface HelpTemplate {
  /** the whole output, each part as NUL, its index, NUL */
  text: string;
  parts: HelpPart[];
  /** the help settings the parts are formatted with (program.ts) */
  minWidthToWrap: number;
}

/** The help text at `width` columns (undefined: not a terminal, commander's 80). */
export function renderHelp(template: HelpTemplate, width: number | undefined): string {
  const helper = new Help();
  helper.prepareContext({ helpWidth: width });
  helper.minWidthToWrap = template.minWidthToWrap;
  return template.text.replace(/\0(\d+)\0/g, (_, i: string) => {
    const part = template.parts[Number(i)]!;
    return 'wrap' in part ? helper.boxWrap(part.wrap, helper.helpWidth!) : helper.formatItem(...part.item, helper);
  });
}
