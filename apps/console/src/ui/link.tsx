// Mantine's Anchor as a router link: typed routes, params and search, and the router's own navigation.
import { Anchor, type AnchorProps } from "@mantine/core";
import { createLink } from "@tanstack/react-router";
import { forwardRef, type AnchorHTMLAttributes } from "react";

const AnchorElement = forwardRef<HTMLAnchorElement, AnchorProps & AnchorHTMLAttributes<HTMLAnchorElement>>((props, ref) => (
  <Anchor component="a" ref={ref} {...props} />
));
AnchorElement.displayName = "AnchorElement";

export const RouterAnchor = createLink(AnchorElement);
