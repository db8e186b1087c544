package config

import (
	"fmt"
	"strconv"

	"github.com/goccy/go-yaml/ast"
)

// duplicateKeys reports every key written twice in one mapping, at the
// second (and any later) occurrence. The parser is told to allow them so
// that all are found in one pass, each named with the mapping it is in;
// the parser's own check stops at the first and names neither.
func duplicateKeys(file string, body ast.Node) Errors {
	var errs Errors
	var walk func(n ast.Node, path string)
	walk = func(n ast.Node, path string) {
		switch v := n.(type) {
		case *ast.MappingNode:
			first := map[string]*ast.MappingValueNode{}
			for _, mv := range v.Values {
				k := keyString(mv.Key)
				if f, ok := first[k]; ok {
					p := posOf(mv.Key)
					errs = append(errs, &Error{File: file, Line: p.line, Column: p.col, Message: duplicateMessage(k, path, f, mv)})
				} else {
					first[k] = mv
				}
				walk(mv.Value, joinPath(path, k))
			}
		case *ast.MappingValueNode:
			walk(v.Value, joinPath(path, keyString(v.Key)))
		case *ast.SequenceNode:
			for i, e := range v.Values {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		case *ast.AnchorNode:
			walk(v.Value, path)
		case *ast.TagNode:
			walk(v.Value, path)
		}
	}
	walk(body, "")
	return errs
}

// duplicateMessage says that key, in the mapping at path, repeats the
// entry first, and what to do about it.
func duplicateMessage(key, path string, first, again *ast.MappingValueNode) string {
	where := "at the top level"
	if path != "" {
		where = "in " + strconv.Quote(path)
	}
	line := posOf(first.Key).line
	if _, merge := again.Key.(*ast.MergeKeyNode); merge {
		return fmt.Sprintf(`"<<" appears twice %s (first on line %d); merge several anchors with one key: <<: [%s, %s]`,
			where, line, aliasText(first.Value, "*a"), aliasText(again.Value, "*b"))
	}
	msg := fmt.Sprintf("the key %q appears twice %s (first on line %d); keep one", key, where, line)
	if isMapping(first.Value) && isMapping(again.Value) {
		msg += ", and move the keys under the other into it"
	}
	return msg
}

// aliasText is "*name" for an alias node, else fallback.
func aliasText(n ast.Node, fallback string) string {
	if a, ok := n.(*ast.AliasNode); ok && a.Value != nil {
		return "*" + a.Value.GetToken().Value
	}
	return fallback
}

func isMapping(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}
