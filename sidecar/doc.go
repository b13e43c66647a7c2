// Package sidecar is guidepub's only dynamic part: the authenticated Portal
// API (credential test, ready event object and dispatch, webhook delivery
// history), private documents behind an access token, and the health and
// metrics endpoints.
//
// It reads what the exporter wrote to the private tree (site.RecordPath,
// site.EventPath, site.PrivateDocPath), keeps credentials and queued
// webhook deliveries in a store.Store, and hands deliveries to a
// delivery.Queue. Sub-packages: authtoken signs the access tokens of
// private documents, apitoken makes API credentials.
package sidecar
