package url

func (u *URL) SetHost(v string) error     { return nil }
func (u *URL) SetHostname(v string) error { return nil }
