import MarkdownIt from 'markdown-it';
import { Html } from './html';

/**
 * A listing's model card (readme, issue 40) as console markup. Sellers write it, buyers read
 * it, so it is hostile input: markdown-it with `html: false` escapes every tag written in
 * the Markdown (`<script>`, `<img onerror>` render as text), and its validateLink refuses
 * `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs (such a link renders as its
 * source text). What markdown-it itself makes carries no event handler or style attribute.
 * Links open with rel="noopener nofollow" (and no referrer): a seller's links get no ranking
 * from us and no handle on the console's window.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  token.attrSet('rel', 'noopener nofollow noreferrer');
  token.attrSet('target', '_blank');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** The readme rendered; markup of markdown-it's making only (see above). */
export function renderMarkdown(source: string): Html {
  return new Html(md.render(source));
}
