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
		i := strings.IndexByte(s, '<')
		if i < 0 {
			if skipUntil == "" {
				b.WriteString(html.UnescapeString(s))
			}
			break
		}
		if skipUntil == "" {
			b.WriteString(html.UnescapeString(s[:i]))
		}
		s = s[i:]
		end := strings.IndexByte(s, '>')
		if end < 0 {
			if skipUntil == "" {
				b.WriteString(html.UnescapeString(s)) // a lone '<' is text
			}
			break
		}
		tag := s[1:end]
		s = s[end+1:]
		name, closing := tagName(tag)
		if skipUntil != "" {
			if closing && name == skipUntil {
				skipUntil = ""
			}
			continue
		}
		switch {
		case !closing && (name == "script" || name == "style"):
			skipUntil = name
		case blockTags[name] && (closing || name == "br"):
			b.WriteByte('\n')
		}
	}
	return strings.TrimSpace(collapseNewlines(b.String()))
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
