package sidecar

import (
	"net/http"

	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/site"
)

// handleIntegrationTest answers POST /api/v1/integrations/test with the app
// id of valid credentials.
func (s *Server) handleIntegrationTest(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"appId": principal(r.Context()).AppID})
}

// handleEventObject answers GET .../events/{eventType}/object with the
// ready event and a fresh authtoken.
func (s *Server) handleEventObject(w http.ResponseWriter, r *http.Request) {
	g, err := s.readyGuide(r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSONBytes(w, http.StatusOK, s.events.render(g))
}

// dispatchResponse is the 202 body of the dispatch endpoint.
type dispatchResponse struct {
	Deliveries []queuedDelivery `json:"deliveries"`
}

type queuedDelivery struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// handleDispatch answers POST .../events/{eventType}/dispatch: it queues the
// ready event for every webhook of the guide and lists what it queued.
func (s *Server) handleDispatch(w http.ResponseWriter, r *http.Request) {
	g, err := s.readyGuide(r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ds, err := s.events.enqueue(r.Context(), g, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resp := dispatchResponse{Deliveries: make([]queuedDelivery, 0, len(ds))}
	for _, d := range ds {
		resp.Deliveries = append(resp.Deliveries, queuedDelivery{ID: d.ID, URL: d.URL})
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// deliveriesResponse is the body of the delivery list.
type deliveriesResponse struct {
	Deliveries []delivery.Delivery `json:"deliveries"`
}

// handleDeliveries answers GET .../events/deliveries with every delivery of
// the guide and its attempts.
func (s *Server) handleDeliveries(w http.ResponseWriter, r *http.Request) {
	g, err := s.ownedGuide(r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ds, err := s.queue.Deliveries(r.Context(), g.record.GuideID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ds == nil {
		ds = []delivery.Delivery{}
	}
	writeJSON(w, http.StatusOK, deliveriesResponse{Deliveries: ds})
}

// handleRetry answers POST .../events/deliveries/{deliveryId}/retry: a
// dropped or exhausted delivery is sent again (202); any other state is 409.
func (s *Server) handleRetry(w http.ResponseWriter, r *http.Request) {
	g, err := s.ownedGuide(r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.queue.Retry(r.Context(), g.record.GuideID, r.PathValue("deliveryId"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, d)
}

// ownedGuide returns the guide named by the path if the authenticated app's
// owner owns it: ErrGuideNotFound (404) or errPermissionDenied (403). fresh:
// see Events.guide.
func (s *Server) ownedGuide(r *http.Request, fresh bool) (*guide, error) {
	g, err := s.events.guide(r.Context(), r.PathValue("guideId"), fresh)
	if err != nil {
		return nil, err
	}
	if g.record.OwnerID == "" || g.record.OwnerID != principal(r.Context()).OwnerID {
		return nil, errPermissionDenied
	}
	return g, nil
}

// readyGuide checks the event endpoints' path and query: eventType must be
// "ready", the guide the caller's and ready, and taskId, when given, its
// current work order. Each mismatch is 404 not_found (403 for another
// owner's guide).
func (s *Server) readyGuide(r *http.Request, fresh bool) (*guide, error) {
	if r.PathValue("eventType") != site.EventReady {
		return nil, notFound(`unknown event type: the only event type is "ready"`)
	}
	g, err := s.ownedGuide(r, fresh)
	if err != nil {
		return nil, err
	}
	if g.event == nil {
		return nil, ErrNotReady
	}
	if q := r.URL.Query(); q.Has("taskId") && q.Get("taskId") != g.event.WorkOrderID {
		return nil, notFound("taskId is not the guide's current work order")
	}
	return g, nil
}
