import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";

/**
 * A campaign's story, from Markdown to the HTML its donation page shows. Markdown's own raw HTML
 * is off (it shows as text), and the output is sanitised again to a short list of tags: links
 * only to http, https and mailto, always rel="noopener noreferrer nofollow ugc", opening a new tab.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });
// The page loads no image from elsewhere (img-src 'self'): an image in the story shows its description.
markdown.renderer.rules.image = (tokens, index) => markdown.utils.escapeHtml(tokens[index]?.content ?? "");

const LINKABLE = /^(https?:|mailto:)/i;

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: ["p", "em", "strong", "a", "ul", "ol", "li", "h2", "h3", "h4", "blockquote", "br", "hr"],
  allowedAttributes: { a: ["href", "rel", "target"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  transformTags: {
    // The page's title is its h1: the story's headings start one level below it.
    h1: "h2",
    h5: "h4",
    h6: "h4",
    // A link to anywhere else keeps its words, without being a link (span is not allowed: only its text stays).
    a: (_tagName, attribs): sanitizeHtml.Tag =>
      attribs.href && LINKABLE.test(attribs.href.trim())
        ? // A new tab: the donor keeps the form (and, in an embedded overlay, the charity's page).
          {
            tagName: "a",
            attribs: { href: attribs.href.trim(), rel: "noopener noreferrer nofollow ugc", target: "_blank" },
          }
        : { tagName: "span", attribs: {} },
  },
  exclusiveFilter: (frame) => frame.tag === "p" && frame.text.trim() === "",
};

export function renderStory(story: string): string {
  return sanitizeHtml(markdown.render(story), SANITIZE);
}
