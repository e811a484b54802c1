#!/usr/bin/env python3
"""Print the UTS #46 mapping table of the installed Python `idna` package
(https://pypi.org/project/idna/, BSD-3; its uts46data is generated from
Unicode's IdnaMappingTable.txt) as lines "START STATUS [MAPPING-HEX ...]",
for main.go's -uts46 flag. x/net/idna, the default source, carries Unicode
15.0 tables when built with Go < 1.27, while the WPT data follows UTS #46
version 16 or later; idna 3.13 carries Unicode 17.

Usage: python3 uts46_from_python.py > /tmp/uts46.txt
"""
import idna
import idna.uts46data

print("# idna", idna.__version__, "Unicode", idna.idnadata.__version__)
for row in idna.uts46data.uts46data:
    start, status = row[0], row[1]
    mapping = row[2] if len(row) > 2 else None
    fields = ["%X" % start, status]
    if mapping is not None:
        fields += ["%X" % ord(c) for c in mapping]
    print(" ".join(fields))
