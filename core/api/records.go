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
	writeXML(w, http.StatusOK, x.bytes())
	x.release()
}

// createRecord serves POST /<segment>: 201 with Location = {base_url}/<segment>/<new id>.
func (s *Server) createRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object) {
	ctx := r.Context()
	wv, err := s.readWrite(w, r, c, obj, 0)
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
	if err != nil {
		s.writeError(w, fmt.Errorf("create %s: %w", obj.APIPrefix, err))
		return
	}
	w.Header().Set("Location", c.Base+"/"+obj.APIPrefix+"/"+strconv.FormatInt(rec.ID, 10))
	writeEmpty(w, http.StatusCreated)
}

// updateRecord serves PUT /<segment>/{id}: a partial update; 404 for a missing or deleted record.
func (s *Server) updateRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) {
	ctx := r.Context()
	wv, err := s.readWrite(w, r, c, obj, id)
	if err != nil {
		s.writeError(w, err)
		return
	}
	u := core.Update{Values: wv.values, VersionComment: wv.comment, UserID: c.User.ID, Time: s.now().Unix()}
	if _, err := s.st.UpdateRecord(ctx, c.Account.ID, obj.APIPrefix, id, u); err != nil {
		if errors.Is(err, core.ErrNotFound) {
			err = recordNotFound(obj, strconv.FormatInt(id, 10))
		}
		s.writeError(w, fmt.Errorf("update %s %d: %w", obj.APIPrefix, id, err))
		return
	}
	writeEmpty(w, http.StatusOK)
}

// deleteRecord serves DELETE /<segment>/{id}: a soft delete; 404 when missing, 409 when already deleted.
func (s *Server) deleteRecord(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) {
	err := s.st.DeleteRecord(r.Context(), c.Account.ID, obj.APIPrefix, id, c.User.ID, s.now().Unix())
	switch {
	case err == nil:
		writeEmpty(w, http.StatusOK)
	case errors.Is(err, core.ErrNotFound):
		s.writeError(w, recordNotFound(obj, strconv.FormatInt(id, 10)))
	case errors.Is(err, core.ErrConflict):
		s.writeError(w, &httpError{http.StatusConflict, "The record " + obj.WirePrefix() + strconv.FormatInt(id, 10) + " is already deleted."})
	default:
		s.writeError(w, fmt.Errorf("delete %s %d: %w", obj.APIPrefix, id, err))
	}
}

// readWrite reads, parses and validates the body of a create (id 0) or an update. An update is checked
// against the stored record, so that what a read gave may be sent back: see checkWrite.
func (s *Server) readWrite(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) (writeValues, error) {
	data, err := readBody(w, r, s.opt.MaxBodyBytes)
	if err != nil {
		return writeValues{}, err
	}
	// An empty body is refused below as XML without a root element, whatever its type: the gateway forwards an
	// empty JSON body untranslated, and "no root element" is what is wrong with it.
	var charset string
	if len(data) > 0 {
		if charset, err = checkContentType(r.Header.Get("Content-Type")); err != nil {
			return writeValues{}, err
		}
	}
	body, err := parseRecordBody(data, obj.RootElement(), charset)
	if err != nil {
		return writeValues{}, err
	}
	sc, err := s.schemaOf(r.Context(), c)
	if err != nil {
		return writeValues{}, err
	}
	if id == 0 {
		return checkWrite(body, sc.fields[obj.APIPrefix], sc, nil, c.Version)
	}
	rec, err := s.st.Record(r.Context(), c.Account.ID, obj.APIPrefix, id)
	if errors.Is(err, core.ErrNotFound) || err == nil && rec.DeletedTime != 0 {
		return writeValues{}, recordNotFound(obj, strconv.FormatInt(id, 10))
	}
	if err != nil {
		return writeValues{}, fmt.Errorf("read %s %d: %w", obj.APIPrefix, id, err)
	}
	return checkWrite(body, sc.fields[obj.APIPrefix], sc, &rec, c.Version)
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
