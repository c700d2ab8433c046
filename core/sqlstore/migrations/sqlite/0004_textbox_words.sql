-- 0004: a Textbox is indexed when its value is one word of any script (core.IsWord), folded as Unicode folds
-- case (core.FoldWord); before, only words of ASCII letters and digits were. The terms of Textbox fields are
-- deleted here and written again by this migration's data step (indexTextboxes in terms.go), which SQL cannot
-- do: a title written before the upgrade is then found like a new one.
DELETE FROM terms WHERE EXISTS (SELECT 1 FROM fields f WHERE f.account_id = terms.account_id
	AND f.kind = terms.kind AND f.id = terms.field_id AND f.type = 'Textbox');
