// Package packaging holds no code: its tests check the packaging files
// beside it (make install, the systemd units, the .deb built by nfpm, the
// Dockerfile) by running them where the machine allows. README.md
// describes the files.
package packaging
