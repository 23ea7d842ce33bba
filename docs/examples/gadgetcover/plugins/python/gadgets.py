"""GadgetCover's plugins: a gadget's monthly premium comes from the GadgetRates table by its category,
the policy fee is a flat amount per segment, and a gadget worth more than its category covers fails
validation."""

import pas

POLICY_FEE = 12


def _gadgets(request):
    return [element for element in request["segment"]["element"]["elements"] if element["type"] == "Gadget"]


def _rates(gadget):
    return pas.lookup("GadgetRates", [gadget["data"]["category"]])


def validate_GadgetCover(request):
    errors = []
    for gadget in _gadgets(request):
        category, rates = gadget["data"]["category"], _rates(gadget)
        if rates is None:
            errors.append({"locator": gadget["locator"], "message": f"no rate for a {category}"})
        elif gadget["data"]["value"] > rates["maxValue"]:
            errors.append(
                {"locator": gadget["locator"], "message": f"a {category} is covered up to {rates['maxValue']}"}
            )
    return {"errors": errors}


def rate_GadgetCover(request):
    items = [
        {"elementLocator": gadget["locator"], "chargeType": "premium", "rate": _rates(gadget)["monthlyRate"]}
        for gadget in _gadgets(request)
    ]
    items.append(
        {"elementLocator": request["segment"]["element"]["locator"], "chargeType": "fee", "amount": POLICY_FEE}
    )
    return {"items": items}
