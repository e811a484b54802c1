package url

// IPv6 parsing and serializing, URL Standard §3.5 "IPv6 parser" and §3.6
// "IPv6 serializer".

const ipv6Pieces = 8

// parseIPv6 parses the text between "[" and "]".
func parseIPv6(s string) (addr [ipv6Pieces]uint16, err error) {
	pieceIndex := 0
	compress := -1
	p := 0
	if p < len(s) && s[p] == ':' {
		if len(s) < 2 || s[1] != ':' {
			return addr, ErrInvalidIPv6
		}
		p += 2
		pieceIndex++
		compress = pieceIndex
	}
	for p < len(s) {
		if pieceIndex == ipv6Pieces {
			return addr, ErrInvalidIPv6
		}
		if s[p] == ':' {
			if compress != -1 {
				return addr, ErrInvalidIPv6
			}
			p++
			pieceIndex++
			compress = pieceIndex
			continue
		}
		value, length := uint16(0), 0
		for length < 4 && p < len(s) {
			d, ok := unhex(s[p])
			if !ok {
				break
			}
			value = value<<4 | uint16(d)
			p++
			length++
		}
		if p < len(s) && s[p] == '.' {
			// IPv4 in IPv6 ("::ffff:1.2.3.4"), step "If c is U+002E".
			if length == 0 {
				return addr, ErrInvalidIPv6
			}
			p -= length
			if pieceIndex > ipv6Pieces-2 {
				return addr, ErrInvalidIPv6
			}
			numbersSeen := 0
			for p < len(s) {
				ipv4Piece := -1
				if numbersSeen > 0 {
					if s[p] == '.' && numbersSeen < 4 {
						p++
					} else {
						return addr, ErrInvalidIPv6
					}
				}
				if p >= len(s) || s[p] < '0' || s[p] > '9' {
					return addr, ErrInvalidIPv6
				}
				for p < len(s) && s[p] >= '0' && s[p] <= '9' {
					n := int(s[p] - '0')
					switch {
					case ipv4Piece == -1:
						ipv4Piece = n
					case ipv4Piece == 0:
						return addr, ErrInvalidIPv6
					default:
						ipv4Piece = ipv4Piece*10 + n
					}
					if ipv4Piece > 255 {
						return addr, ErrInvalidIPv6
					}
					p++
				}
				addr[pieceIndex] = addr[pieceIndex]<<8 | uint16(ipv4Piece)
				numbersSeen++
				if numbersSeen == 2 || numbersSeen == 4 {
					pieceIndex++
				}
			}
			if numbersSeen != 4 {
				return addr, ErrInvalidIPv6
			}
			break
		} else if p < len(s) && s[p] == ':' {
			p++
			if p == len(s) {
				return addr, ErrInvalidIPv6
			}
		} else if p < len(s) {
			return addr, ErrInvalidIPv6
		}
		addr[pieceIndex] = value
		pieceIndex++
	}
	if compress != -1 {
		swaps := pieceIndex - compress
		pieceIndex = ipv6Pieces - 1
		for pieceIndex != 0 && swaps > 0 {
			addr[pieceIndex], addr[compress+swaps-1] = addr[compress+swaps-1], addr[pieceIndex]
			pieceIndex--
			swaps--
		}
	} else if pieceIndex != ipv6Pieces {
		return addr, ErrInvalidIPv6
	}
	return addr, nil
}

// appendIPv6 serializes addr in brackets, compressing the first longest
// run of two or more zero pieces.
func appendIPv6(dst []byte, addr [ipv6Pieces]uint16) []byte {
	compress, best := -1, 1
	for i := 0; i < ipv6Pieces; {
		if addr[i] != 0 {
			i++
			continue
		}
		j := i
		for j < ipv6Pieces && addr[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j
	}
	dst = append(dst, '[')
	ignore0 := false
	for i := 0; i < ipv6Pieces; i++ {
		if ignore0 && addr[i] == 0 {
			continue
		}
		ignore0 = false
		if compress == i {
			if i == 0 {
				dst = append(dst, "::"...)
			} else {
				dst = append(dst, ':')
			}
			ignore0 = true
			continue
		}
		dst = appendHex16(dst, addr[i])
		if i != ipv6Pieces-1 {
			dst = append(dst, ':')
		}
	}
	return append(dst, ']')
}

func appendHex16(dst []byte, v uint16) []byte {
	const lowerHex = "0123456789abcdef"
	started := false
	for shift := 12; shift >= 0; shift -= 4 {
		d := v >> shift & 0xf
		if d != 0 || started || shift == 0 {
			dst = append(dst, lowerHex[d])
			started = true
		}
	}
	return dst
}
