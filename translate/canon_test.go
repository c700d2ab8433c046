package translate

import (
	"sort"

	"github.com/reqgate/reqgate/translate/internal/xmlcanon"
)

// cnode is a document as encoding/xml sees it (package xmlcanon).
type cnode = xmlcanon.Node

// canonical reads doc as xmlcanon does, with this package's containers.
func canonical(doc []byte) (*cnode, error) { return xmlcanon.Read(doc, IsContainer) }

// diff describes the first difference between two canonical documents ("" when equal).
func diff(a, b *cnode, path string) string { return xmlcanon.Diff(a, b, path) }

// regroup puts the children of every element in the order the mapping gives them: children of one name
// together, known names in interface order, unknown names in order of first appearance.
func regroup(n *cnode, parent string) {
	info := lookup(parent, n.Name)
	if len(n.Kids) > 0 {
		info = info.forChildren(func(name string) bool {
			for _, k := range n.Kids {
				if k.Name == name {
					return true
				}
			}
			return false
		})
	}
	first := map[string]int{}
	for i, k := range n.Kids {
		if _, ok := first[k.Name]; !ok {
			first[k.Name] = i
		}
	}
	key := func(k *cnode) [2]int {
		r := rank(info.order, k.Name)
		if r < len(info.order) {
			return [2]int{0, r}
		}
		return [2]int{1, first[k.Name]}
	}
	sort.SliceStable(n.Kids, func(a, b int) bool {
		ka, kb := key(n.Kids[a]), key(n.Kids[b])
		return ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1]
	})
	for _, k := range n.Kids {
		regroup(k, n.Name)
	}
}
