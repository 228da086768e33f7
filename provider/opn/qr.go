package opn

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"strconv"
	"strings"
)

// rasterSVG draws an SVG made of filled rect elements (how QR encoders
// commonly write SVG) into an image, white background, 2 px per unit.
// Other SVG shapes are not supported.
func rasterSVG(data []byte) (image.Image, error) {
	type rect struct{ x, y, w, h float64 }
	var (
		rects         []rect
		width, height float64
		dec           = xml.NewDecoder(bytes.NewReader(data))
		str           = func(e xml.StartElement, name string) string {
			for _, a := range e.Attr {
				if a.Name.Local == name {
					return a.Value
				}
			}
			return ""
		}
		attr = func(e xml.StartElement, name string) (float64, bool) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(str(e, name), "px"), 64)
			return v, err == nil
		}
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch e.Name.Local {
		case "svg":
			width, _ = attr(e, "width")
			height, _ = attr(e, "height")
			if vb := strings.Fields(str(e, "viewBox")); len(vb) == 4 {
				width, _ = strconv.ParseFloat(vb[2], 64)
				height, _ = strconv.ParseFloat(vb[3], 64)
			}
		case "rect":
			fill := strings.ToLower(str(e, "fill"))
			if fill == "#fff" || fill == "#ffffff" || fill == "white" || fill == "none" {
				continue
			}
			x, _ := attr(e, "x")
			y, _ := attr(e, "y")
			w, okw := attr(e, "width")
			h, okh := attr(e, "height")
			if okw && okh {
				rects = append(rects, rect{x, y, w, h})
			}
		}
	}
	if len(rects) == 0 || width <= 0 || height <= 0 || width > 4096 || height > 4096 {
		return nil, errors.New("svg: no QR modules drawn with rect elements")
	}
	const scale = 2
	img := image.NewGray(image.Rect(0, 0, int(width*scale)+8*scale, int(height*scale)+8*scale))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	off := 4 * scale // quiet zone
	for _, r := range rects {
		if r.w >= width && r.h >= height {
			continue // a background
		}
		b := image.Rect(off+int(r.x*scale), off+int(r.y*scale), off+int((r.x+r.w)*scale), off+int((r.y+r.h)*scale))
		draw.Draw(img, b, &image.Uniform{color.Black}, image.Point{}, draw.Src)
	}
	return img, nil
}
