import { forbiddenAddressReason, RETRY_DELAY_CAP_MS, retryDelayMs, templateNamesFromFiles, urlRefusal } from "@conveyor/contracts";

describe("retryDelayMs", () => {
  it("doubles per attempt from RETRY_BASE_MS, with ±20 % jitter", () => {
    for (const [attempt, base] of [
      [1, 1000],
      [2, 1000],
      [3, 1000],
      [5, 250],
    ] as const) {
      const nominal = base * 2 ** (attempt - 1);
      expect(retryDelayMs(attempt, base, () => 0)).toBe(Math.round(nominal * 0.8));
      expect(retryDelayMs(attempt, base, () => 0.5)).toBe(nominal);
      expect(retryDelayMs(attempt, base, () => 1)).toBe(Math.round(nominal * 1.2));
    }
  });

  it("never exceeds one hour", () => {
    expect(retryDelayMs(25, 1000, () => 1)).toBe(RETRY_DELAY_CAP_MS);
    expect(retryDelayMs(1000, 1000)).toBe(RETRY_DELAY_CAP_MS);
  });
});

describe("URL policy", () => {
  const strict = { allowHttp: false, allowPrivateNetwork: false };
  it.each([
    "file:///etc/passwd",
    "gopher://example.com/",
    "https://127.0.0.1/",
    "https://localhost/",
    "https://[::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::127.0.0.1]/",
    "https://[::a9fe:a9fe]/",
    "https://0.0.0.0/",
    "https://2130706433/",
    "https://0x7f.0.0.1/",
    "https://0177.0.0.1/",
    "https://169.254.169.254/latest/meta-data/",
    "https://metadata.google.internal/",
    "https://10.1.2.3/",
    "https://172.16.0.1/",
    "https://192.168.1.1/",
    "https://100.64.0.1/",
    "https://[fc00::1]/",
    "https://[fe80::1]/",
    "https://user:secret@example.com/",
  ])("refuses %s", (url) => {
    expect(urlRefusal(url, strict)).not.toBeNull();
  });

  it("accepts a public https URL, and http only when allowed", () => {
    expect(urlRefusal("https://example.com/hook?x=1", strict)).toBeNull();
    expect(urlRefusal("http://example.com/", strict)).toMatch(/https/);
    expect(urlRefusal("http://example.com/", { ...strict, allowHttp: true })).toBeNull();
  });

  it("lets ALLOW_PRIVATE_NETWORK through private targets but never credentials or other schemes", () => {
    const open = { allowHttp: true, allowPrivateNetwork: true };
    expect(urlRefusal("http://127.0.0.1:8080/", open)).toBeNull();
    expect(urlRefusal("http://u:p@127.0.0.1/", open)).not.toBeNull();
    expect(urlRefusal("file:///etc/passwd", open)).not.toBeNull();
  });

  it("judges IPv4-mapped IPv6 by the IPv4 address it carries", () => {
    expect(forbiddenAddressReason("::ffff:10.0.0.1")).toMatch(/private/);
    expect(forbiddenAddressReason("::ffff:8.8.8.8")).toBeNull();
    expect(forbiddenAddressReason("2606:4700::1111")).toBeNull();
  });

  it("refuses every other IPv6 range that carries or translates to an IPv4 address, even a public one", () => {
    expect(urlRefusal("https://[::127.0.0.1]/", strict)).toBe("points to a non-public address (::7f00:1 is a ipv4Compatible address)");
    expect(urlRefusal("https://[::a9fe:a9fe]/", strict)).toBe("points to a non-public address (::a9fe:a9fe is a ipv4Compatible address)");
    expect(forbiddenAddressReason("::8.8.8.8")).toBe("::808:808 is a ipv4Compatible address");
    expect(forbiddenAddressReason("::ffff:0:808:808")).toBe("::ffff:0:808:808 is a rfc6145 address");
    expect(forbiddenAddressReason("64:ff9b::8.8.8.8")).toBe("64:ff9b::808:808 is a rfc6052 address");
    expect(forbiddenAddressReason("64:ff9b:1::808:808")).toBe("64:ff9b:1::808:808 is a rfc6052 address");
    expect(forbiddenAddressReason("2002:808:808::1")).toBe("2002:808:808::1 is a 6to4 address");
    expect(forbiddenAddressReason("2001:0:4136:e378:8000:63bf:f7f7:f7f7")).toBe("2001:0:4136:e378:8000:63bf:f7f7:f7f7 is a teredo address");
    expect(forbiddenAddressReason("::")).toBe(":: is a unspecified address");
    expect(forbiddenAddressReason("::1")).toBe("::1 is a loopback address");
  });

  it("judges a zoned IPv6 address without its zone, and refuses what is not an address", () => {
    expect(forbiddenAddressReason("fe80::1%eth0")).toBe("fe80::1 is a linkLocal address");
    expect(forbiddenAddressReason("example.com")).toBe('"example.com" is not an IP address');
    expect(forbiddenAddressReason("1.2.3.4/8")).toBe('"1.2.3.4/8" is not an IP address');
  });
});

describe("templateNamesFromFiles", () => {
  it("keeps .hbs files with safe names", () => {
    expect(templateNamesFromFiles(["invoice.hbs", "README.md", "letter.hbs", "../x.hbs", "a b.hbs", "letter.hbs"])).toEqual(["invoice", "letter"]);
  });
});
