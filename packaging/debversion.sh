#!/bin/sh
# debversion.sh: the Debian version of the checkout. A Debian version
# starts with a digit: a tag v1.2.3 on HEAD gives 1.2.3, anything else
# 0.0.0~git<commit time>.<short hash> (~ sorts before any release).
v=$(git describe --tags --exact-match 2>/dev/null || true)
case $v in
v[0-9]*) echo "${v#v}" ;;
*) echo "0.0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d%H%M%S 2>/dev/null || echo 0).$(git rev-parse --short HEAD 2>/dev/null || echo 0)" ;;
esac
