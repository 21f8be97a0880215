// Package imagestore keeps the runc backend's images on local disk. It
// pulls them from OCI and Docker registries, loads them from docker-archive
// tarballs and OCI layouts (so that air-gapped hosts and tests need no
// registry), unpacks each layer once under its diffID, and remembers which
// names point at which image across restarts of runlet.
//
// On disk, under the root:
//
//	index.json      names → image IDs → images (config, ordered layers); layers → sizes
//	layers/<hex>/   one layer's tree, named by the hex of its diffID: an overlay lower dir
//	tmp/            unpacks, loads and index writes under way; emptied by Open
//	lock            held by the one process that has the store open
//	load.sock       where that process takes loads from others (Serve, LoadThrough)
//
// An image's ID is the digest of its manifest: a pull by tag and a pull by
// digest meet at one record, and a name that moves to a new manifest leaves
// the old image behind, unnamed, for GC.
//
// A layer directory holds whiteouts in overlayfs's form, not OCI's: a
// ".wh.x" file becomes a 0/0 character device x, and an opaque directory
// (".wh..wh..opq") gets the trusted.overlay.opaque xattr (user.overlay.opaque
// when runlet is not root: the overlay is then mounted with userxattr). A
// stack of layer directories mounted as overlay lower dirs thus shows what
// OCI's whiteout rules say the image holds, without ever merging layers.
//
// Consistency after a crash rests on order: a layer is unpacked in tmp and
// renamed into layers/ before the index names it, and the index is replaced
// whole by a rename. Open then drops what the index does not name and what
// names a layer that is gone.
//
// Known limit: a parent directory that a layer's tar does not list is made
// 0755 root:root in that layer, and in an overlay it hides the lower
// layers' attributes of that directory. Image builders list every parent.
package imagestore
