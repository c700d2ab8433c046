package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/reqgate/reqgate/core"
)

// getRecord serves GET /<segment>/{id}: 404 for a missing or deleted record.
func (s *Server) getRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) {
	ctx := r.Context()
	sc, err := s.schemaOf(ctx, c)
	if err != nil {
		s.writeError(w, err)
		return
	}
	rec, err := s.st.Record(ctx, c.Account.ID, obj.APIPrefix, id)
	if errors.Is(err, core.ErrNotFound) || err == nil && rec.DeletedTime != 0 {
		s.writeError(w, recordNotFound(obj, strconv.FormatInt(id, 10)))
		return
	}
	if err != nil {
		s.writeError(w, fmt.Errorf("read %s %d: %w", obj.APIPrefix, id, err))
		return
	}
	x := newXML()
	writeRecord(x, c.Version, obj, sc.fields[obj.APIPrefix], sc, rec)
	w.Header().Set("ETag", recordTag(x.bytes()))
	writeXML(w, http.StatusOK, x.bytes())
	x.release()
}

// createRecord serves POST /<segment>: 201 with Location = {base_url}/<segment>/<new id>.
func (s *Server) createRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object) {
	wr, err := s.readWrite(w, r, c, obj)
	if err != nil {
		s.writeError(w, err)
		return
	}
	ctx, rc, answered := s.once(w, r, c, http.StatusCreated, wr.data)
	if answered {
		return
	}
	wv, err := wr.check(nil)
	if err != nil {
		s.writeError(w, err)
		return
	}
	now := s.now().Unix()
	rec := core.Record{
		Kind:            obj.APIPrefix,
		Version:         1,
		CreatedTime:     now,
		CreatedBy:       c.User.ID,
		LastUpdatedTime: now,
		LastUpdatedBy:   c.User.ID,
		Values:          wv.values,
	}
	if wv.comment != nil {
		rec.VersionComment = *wv.comment
	}
	rec, err = s.st.CreateRecord(ctx, c.Account.ID, rec)
	if s.raced(ctx, w, c, rc, err) {
		return
	}
	if err != nil {
		s.writeError(w, fmt.Errorf("create %s: %w", obj.APIPrefix, err))
		return
	}
	w.Header().Set("Location", c.Base+"/"+obj.APIPrefix+"/"+strconv.FormatInt(rec.ID, 10))
	writeEmpty(w, http.StatusCreated)
}

// updateRecord serves PUT /<segment>/{id}: a partial update; 404 for a missing or deleted record. The body is
// checked against the record as the store's write transaction holds it (checkWrite inside the Edit), never
// against an earlier read: a version_number sent back is compared with the version the update would replace,
// and a value equal to the stored one is left alone only when it is the stored one at that moment, so a
// concurrent write is never overwritten by a stale comparison. If-Match and If-Unmodified-Since are decided
// there too (412).
func (s *Server) updateRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) {
	pc, err := readPreconditions(r.Header)
	if err != nil {
		s.writeError(w, err)
		return
	}
	wr, err := s.readWrite(w, r, c, obj)
	if err != nil {
		s.writeError(w, err)
		return
	}
	ctx, rc, answered := s.once(w, r, c, http.StatusOK, wr.data)
	if answered {
		return
	}
	now := s.now().Unix()
	edit := func(stored core.Record) (core.Update, error) {
		if err := pc.check(obj, stored, func() string { return tagOf(c.Version, obj, wr.sc, stored) }); err != nil {
			return core.Update{}, err
		}
		wv, err := wr.check(&stored)
		if err != nil {
			return core.Update{}, err
		}
		return core.Update{Values: wv.values, VersionComment: wv.comment, UserID: c.User.ID, Time: now}, nil
	}
	_, err = s.st.UpdateRecord(ctx, c.Account.ID, obj.APIPrefix, id, edit)
	if s.raced(ctx, w, c, rc, err) {
		return
	}
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			err = recordNotFound(obj, strconv.FormatInt(id, 10))
			if gone := pc.gone(obj, id); gone != nil {
				err = gone
			}
		}
		s.writeError(w, fmt.Errorf("update %s %d: %w", obj.APIPrefix, id, err))
		return
	}
	writeEmpty(w, http.StatusOK)
}

// deleteRecord serves DELETE /<segment>/{id}: a soft delete; 404 when missing, 409 when already deleted, 412
// when If-Match or If-Unmodified-Since fails on the record as the delete's transaction holds it.
func (s *Server) deleteRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) {
	pc, err := readPreconditions(r.Header)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var check core.Check
	if pc.conditional() {
		sc, err := s.schemaOf(r.Context(), c)
		if err != nil {
			s.writeError(w, err)
			return
		}
		check = func(stored core.Record) error {
			return pc.check(obj, stored, func() string { return tagOf(c.Version, obj, sc, stored) })
		}
	}
	ctx, rc, answered := s.once(w, r, c, http.StatusOK, nil)
	if answered {
		return
	}
	err = s.st.DeleteRecord(ctx, c.Account.ID, obj.APIPrefix, id, c.User.ID, s.now().Unix(), check)
	switch {
	case s.raced(ctx, w, c, rc, err):
	case err == nil:
		writeEmpty(w, http.StatusOK)
	case pc.ifMatch && (errors.Is(err, core.ErrNotFound) || errors.Is(err, core.ErrConflict)):
		s.writeError(w, pc.gone(obj, id))
	case errors.Is(err, core.ErrNotFound):
		s.writeError(w, recordNotFound(obj, strconv.FormatInt(id, 10)))
	case errors.Is(err, core.ErrConflict):
		s.writeError(w, &httpError{http.StatusConflict, "The record " + obj.WirePrefix() + strconv.FormatInt(id, 10) + " is already deleted."})
	default:
		s.writeError(w, fmt.Errorf("delete %s %d: %w", obj.APIPrefix, id, err))
	}
}

// recordWrite is the parsed body of a create or an update with what checking it needs.
type recordWrite struct {
	data    []byte // the body as sent
	body    []bodyField
	obj     core.Object
	sc      *schema
	version int
}

// check validates the write against the kind's fields: a create (stored nil) or an update of stored, the
// record as the write transaction holds it (see checkWrite).
func (wr recordWrite) check(stored *core.Record) (writeValues, error) {
	return checkWrite(wr.body, wr.obj, wr.sc.fields[wr.obj.APIPrefix], wr.sc, stored, wr.version)
}

// readWrite reads and parses the body of a create or an update, and loads the account's schema to check it.
func (s *Server) readWrite(w http.ResponseWriter, r *http.Request, c *call, obj core.Object) (recordWrite, error) {
	data, err := readBody(w, r, s.opt.MaxBodyBytes)
	if err != nil {
		return recordWrite{}, err
	}
	// An empty body is refused below as XML without a root element, whatever its type: the gateway forwards an
	// empty JSON body untranslated, and "no root element" is what is wrong with it.
	var charset string
	if len(data) > 0 {
		if charset, err = checkContentType(r.Header.Get("Content-Type")); err != nil {
			return recordWrite{}, err
		}
	}
	body, err := parseRecordBody(data, obj.RootElement(), charset)
	if err != nil {
		return recordWrite{}, err
	}
	sc, err := s.schemaOf(r.Context(), c)
	if err != nil {
		return recordWrite{}, err
	}
	return recordWrite{data: data, body: body, obj: obj, sc: sc, version: c.Version}, nil
}

// getFields serves GET /<segment>/field.
func (s *Server) getFields(w http.ResponseWriter, r *http.Request, c *call, obj core.Object) {
	fs, err := s.fields(r.Context(), c, obj.APIPrefix)
	if err != nil {
		s.writeError(w, err)
		return
	}
	x := newXML()
	writeFieldList(x, obj, fs)
	writeXML(w, http.StatusOK, x.bytes())
	x.release()
}
