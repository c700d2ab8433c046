package api

import (
	"html"
	"strings"
)

// blockTags end a line of text when a Textarea's HTML becomes plain text.
var blockTags = map[string]bool{
	"br": true, "p": true, "div": true, "li": true, "ul": true, "ol": true, "tr": true, "table": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "blockquote": true, "pre": true,
}

// plainText is the plain-text version of a Textarea's HTML (value_plaintext, and the version-1 value):
// tags removed, block elements as line breaks, character references decoded, the content of script and
// style dropped. It is not a sanitiser; its output is always escaped when written.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	skipUntil := "" // closing tag whose content is dropped (script, style)
	for len(s) > 0 {
		text, tag, rest, found := cutTag(s)
		if skipUntil == "" {
			b.WriteString(html.UnescapeString(text))
		}
		if !found {
			break
		}
		s = rest
		name, closing := tagName(tag)
		switch {
		case skipUntil != "":
			if closing && name == skipUntil {
				skipUntil = ""
			}
		case !closing && (name == "script" || name == "style"):
			skipUntil = name
		case endsLine(name, closing):
			b.WriteByte('\n')
		}
	}
	return strings.TrimSpace(collapseNewlines(b.String()))
}

// cutTag cuts s around its first tag: the text before it, the inside of the tag and the text after it.
// Without a tag (a lone '<' is text) it returns s as the text and found false.
func cutTag(s string) (before, tag, after string, found bool) {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		return s, "", "", false
	}
	end := strings.IndexByte(s[i:], '>')
	if end < 0 {
		return s, "", "", false
	}
	return s[:i], s[i+1 : i+end], s[i+end+1:], true
}

// endsLine reports whether a tag ends a line of text: the end of a block element, or a line break.
func endsLine(name string, closing bool) bool {
	return blockTags[name] && (closing || name == "br")
}

// htmlText escapes the characters of text that HTML gives a meaning to, and makes line breaks <br />.
var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r\n", "<br />", "\r", "<br />", "\n", "<br />")

// textHTML is the HTML of plain text, the inverse of plainText for text with line feeds only, no leading or
// trailing white space and no more than one empty line in a row: plainText(textHTML(s)) == s.
func textHTML(s string) string { return htmlText.Replace(s) }

// tagName is the lower-case name of a tag's inside ("b", "/p", "br /", "!-- x --") and whether it closes.
func tagName(tag string) (string, bool) {
	closing := strings.HasPrefix(tag, "/")
	tag = strings.TrimPrefix(tag, "/")
	end := strings.IndexAny(tag, " \t\r\n/")
	if end >= 0 {
		tag = tag[:end]
	}
	return strings.ToLower(tag), closing
}

// collapseNewlines keeps at most one empty line in a row.
func collapseNewlines(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return s
}
